import type sharpModule from 'sharp';

let loading: Promise<typeof sharpModule> | null = null;

/**
 * sharp, and libvips with it, loaded at the first image operation rather than at start: a
 * server that has not touched an image yet does not pay its ~90 ms of CPU and ~25 MB of RSS
 * (bench/startup.ts). After the first call this is a settled promise.
 */
export function loadSharp(): Promise<typeof sharpModule> {
  return (loading ??= import('sharp').then((m) => m.default));
}
