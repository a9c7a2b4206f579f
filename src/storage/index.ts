export type { BlobStat, BlobStore, ByteRange, PresignGetOptions } from './blob-store.js';
export { createDiskBlobStore, type DiskBlobStore } from './disk-blob-store.js';
// The S3 store is imported from './s3-blob-store.js' directly (runtime loads it lazily: the AWS SDK is large).
export type { S3BlobStore, S3BlobStoreOptions } from './s3-blob-store.js';
export { fileBlobKey, imageCacheBlobKey, isValidKey, validateKey, validatePrefix } from './keys.js';
