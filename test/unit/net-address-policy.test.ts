// Classification only: nothing here opens a socket.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyAddress, isAllowedAddress, type AddressClass } from '../../src/net/index.js';

const TABLE: Array<[string, AddressClass]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'link-local'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456::1', 'unique-local'],
  ['fec0::1', 'site-local'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['240.0.0.1', 'reserved'],
  ['2001:db8::1', 'reserved'],
  ['2001:2::1', 'benchmarking'],
  // IPv4-mapped IPv6, dotted and hex forms
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['0:0:0:0:0:ffff:127.0.0.1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:a00:1', 'private'],
  ['::ffff:172.16.0.1', 'private'],
  ['::ffff:192.168.0.1', 'private'],
  ['::ffff:169.254.169.254', 'link-local'],
  ['::ffff:a9fe:a9fe', 'link-local'],
  ['::ffff:100.64.0.1', 'cgnat'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::ffff:224.0.0.1', 'multicast'],
  ['::ffff:255.255.255.255', 'broadcast'],
  ['::ffff:192.0.0.1', 'reserved'],
  ['::ffff:198.18.0.1', 'reserved'],
  ['::ffff:240.0.0.1', 'reserved'],
  // Other IPv6 wrappers around IPv4: all refused whatever they embed
  ['64:ff9b::a9fe:a9fe', 'nat64'],
  ['64:ff9b::808:808', 'nat64'],
  ['64:ff9b:1::1', 'nat64'],
  ['::ffff:0:7f00:1', 'ipv4-translated'],
  ['2002:7f00:1::', '6to4'],
  ['2002:808:808::1', '6to4'],
  ['2001:0:4136:e378::1', 'teredo'],
  // Deprecated IPv4-compatible form: not mapped by the kernel, outside 2000::/3
  ['::127.0.0.1', 'reserved'],
  ['::7f00:1', 'reserved'],
  ['::8.8.8.8', 'reserved'],
  // Public
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['93.184.216.34', 'public'],
  ['172.32.0.1', 'public'],
  ['100.128.0.1', 'public'],
  ['::ffff:8.8.8.8', 'public'],
  ['2606:4700:4700::1111', 'public'],
  ['2001:4860:4860::8888', 'public'],
  // Not an address Node would connect to as written
  ['127.1', 'invalid'],
  ['0x7f.0.0.1', 'invalid'],
  ['2130706433', 'invalid'],
  ['localhost', 'invalid'],
  ['', 'invalid'],
  ['[::1]', 'invalid'],
];

describe('classifyAddress', () => {
  for (const [ip, expected] of TABLE) {
    it(`${ip || '(empty)'} is ${expected}`, () => {
      assert.equal(classifyAddress(ip), expected);
    });
  }
});

describe('isAllowedAddress', () => {
  it('allows only public addresses by default', () => {
    for (const [ip, cls] of TABLE) {
      assert.equal(isAllowedAddress(ip, { allowPrivate: false }), cls === 'public', ip);
    }
  });

  it('allows every valid address with allowPrivate, but never an invalid string', () => {
    for (const [ip, cls] of TABLE) {
      assert.equal(isAllowedAddress(ip, { allowPrivate: true }), cls !== 'invalid', ip);
    }
  });
});
