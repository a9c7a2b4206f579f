import type sharpModule from 'sharp';
import { lowerLibvipsPriority } from './processing-priority.js';

let loading: Promise<typeof sharpModule> | null = null;

/**
 * sharp, and libvips with it, loaded at the first image operation rather than at start: a
 * server that has not touched an image yet does not pay its ~90 ms of CPU and ~25 MB of RSS
 * (bench/startup.ts). After the first call this is a settled promise. Every image operation
 * calls it first, so it is also where libvips' new worker threads (started by the operations
 * before) get the media work's lower priority.
 */
export function loadSharp(): Promise<typeof sharpModule> {
  lowerLibvipsPriority();
  return (loading ??= import('sharp').then((m) => m.default));
}
