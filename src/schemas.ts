import { Type, type TSchema } from 'typebox';

// TypeBox schemas shared across floors: the API's bodies (http/, api/) and the kinds' options.

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Free-form custom data (files, media, ingest tasks). */
export const Metadata = Type.Record(Type.String(), Type.Unknown());
