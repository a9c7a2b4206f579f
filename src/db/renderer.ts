// Kept free of imports: a renderer's own module is imported by the SQLite reader thread, and
// what that module imports is loaded there too.

/**
 * A pure function from a read's rows to the JSON text the API shows, named by its module and
 * export so that the SQLite reader thread can import it and render beside the read (see
 * compiledOnce's `rendered`). `arg` is anything structured clone carries (a public URL, say).
 */
export interface Renderer<R, Arg> {
  readonly module: string;
  readonly name: string;
  readonly render: (arg: Arg, rows: R[]) => string;
}

/** `module` is the defining module's import.meta.url, `name` the export `render` is bound to. */
export function renderer<R, Arg>(module: string, name: string, render: (arg: Arg, rows: R[]) => string): Renderer<R, Arg> {
  return { module, name, render };
}
