import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sourceName } from '../../src/net/index.js';

// The title a fetched file's media gets (issue 21): the source URL's file name.

describe('sourceName', () => {
  it('is the last path segment, decoded, without the query', () => {
    assert.equal(sourceName('https://cdn.example.com/videos/Clip%201.mp4?sig=abc#t=3'), 'Clip 1.mp4');
    assert.equal(sourceName('https://example.com/a/b/'), 'b');
    assert.equal(sourceName('http://127.0.0.1:9000/fixtures/video-mp4'), 'video-mp4');
  });
  it('is undefined when the path names nothing or cannot be read', () => {
    assert.equal(sourceName('https://example.com/'), undefined);
    assert.equal(sourceName('https://example.com/%E0%A4%A'), undefined);
    assert.equal(sourceName('not a url'), undefined);
  });
  it('drops control characters and keeps at most 200 characters', () => {
    assert.equal(sourceName('https://example.com/a%0Ab%00c.mp4'), 'abc.mp4');
    assert.equal(sourceName(`https://example.com/${'x'.repeat(300)}`)!.length, 200);
  });
});
