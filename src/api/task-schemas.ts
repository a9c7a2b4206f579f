import { Type } from 'typebox';

const FreeObject = Type.Record(Type.String(), Type.Unknown());
/** A task as every answer shows it (SPEC 2.4). */
export const TaskSchema = Type.Object({
  id: Type.String(),
  object: Type.Literal('task'),
  kind: Type.String(),
  input: Type.Optional(FreeObject),
  options: FreeObject,
  output: Type.Union([FreeObject, Type.Null()]),
  status: Type.String(),
  progress: Type.Integer(),
  /** A failed task: what went wrong, for people; error_code is the stable code (docs/tasks.md). */
  error: Type.Optional(Type.String()),
  error_code: Type.Optional(Type.String()),
  attempts: Type.Integer(),
  parent_id: Type.Optional(Type.String()),
  automation_id: Type.Optional(Type.String()),
  /** The failed or cancelled task this one runs again (POST /tasks/{id}/retry). */
  retry_of: Type.Optional(Type.String()),
  results: Type.Optional(FreeObject),
  /** adaptive_video: when the package first became playable while the task ran (its output is then the processing file). */
  playable_at: Type.Optional(Type.String()),
  workflow: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.String(),
        object: Type.Literal('task'),
        kind: Type.String(),
        status: Type.String(),
        output_file_id: Type.Union([Type.String(), Type.Null()]),
      }),
    ),
  ),
  webhook_url: Type.Optional(Type.String()),
  created: Type.String(),
  updated: Type.String(),
  started: Type.Optional(Type.String()),
  finished: Type.Optional(Type.String()),
});
