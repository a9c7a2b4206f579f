import type { Data } from './types';

// The library's and the detail page's objects, named from the API's own types.

export type Media = Data<'/media/{id}', 'get'>;
export type MediaFile = Media['files'][number];
export type Task = Data<'/tasks/{id}', 'get'>;
export type TaskConfig = Data<'/tasks-config', 'get'>[string];
export type Signature = Data<'/signatures', 'post', 201>;
