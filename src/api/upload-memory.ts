import v8 from 'node:v8';
import vm from 'node:vm';

// An upload's body arrives as TLS records: Node allocates a new buffer for each (16 KiB, outside
// V8's heap) that is dead once written to disk. V8 frees such a buffer only when it collects its
// small JS object, and ~100 bytes of objects per 16 KiB fill the young generation too slowly:
// the collection that freed them came from V8's external-memory limit (64 MB over the last full
// collection). So a large upload kept up to ~60 MB of dead records alive at once, and glibc kept
// the pages after (docs/benchmarks.md, "Resumable uploads"). Asking for a young-generation
// collection every 2 MiB of body (process-wide, all uploads together) frees them while young: a
// collection then finds almost nothing alive and costs ~0.1-0.4 ms quiet (~1 ms at load 8), i.e.
// 50-200 ms per GB received. Every 8 MiB a tus upload's peak was ~9 MB higher (dead records and
// pieces waiting in malloc's heap), every 4 MiB no better in two runs.
//
// Those frequent young collections promote what a request keeps alive across a few MiB of its
// body (its request, reply and stream objects): a 1 GB upload in 8 MiB PATCHes left ~16 MB of
// such garbage in the old generation, which V8 collects only once the old generation reaches its
// limit (the server's RSS peaked at 136 MB against 104 idle). So every FULL_COLLECT_EVERY_BYTES
// the collection is a full one, marked concurrently: 4 per GB, at a cost the 1 GB benchmark does
// not resolve (3,679 ms of server CPU per GB for a PUT, 3,856 without), peak 125 MB (every
// 64 MiB: 126 MB, but +40% CPU; docs/benchmarks.md, "Resumable uploads").

/** Body bytes received between two young-generation collections. */
export const COLLECT_EVERY_BYTES = 2 * 1024 * 1024;
/** Body bytes received between two full collections (a multiple of COLLECT_EVERY_BYTES). */
export const FULL_COLLECT_EVERY_BYTES = 256 * 1024 * 1024;

type Collect = (type: 'minor' | 'major') => void;
let collector: Collect | null | undefined;

/** V8's collector, exposed once to a context of its own (globalThis keeps no `gc`); null if unavailable. */
function heapCollector(): Collect | null {
  if (collector !== undefined) return collector;
  collector = null;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc: unknown = vm.runInNewContext('gc');
    if (typeof gc === 'function') collector = (type) => gc({ type, execution: type === 'major' ? 'async' : 'sync' });
  } catch {
    // Without it uploads still work; they use more memory.
  }
  return collector;
}

let received = 0;
let sinceFull = 0;
let collections = 0;
let fullCollections = 0;

/**
 * Counts `bytes` of upload body received; every COLLECT_EVERY_BYTES, collects the young
 * generation, and every FULL_COLLECT_EVERY_BYTES the whole heap instead.
 */
export function bodyReceived(bytes: number): void {
  received += bytes;
  if (received < COLLECT_EVERY_BYTES) return;
  received = 0;
  const collect = heapCollector();
  if (!collect) return;
  sinceFull += COLLECT_EVERY_BYTES;
  if (sinceFull >= FULL_COLLECT_EVERY_BYTES) {
    sinceFull = 0;
    collect('major');
    fullCollections++;
  } else {
    collect('minor');
    collections++;
  }
}

/** Young-generation collections asked for so far (tests). */
export const uploadCollections = (): number => collections;
/** Full collections asked for so far (tests). */
export const uploadFullCollections = (): number => fullCollections;
