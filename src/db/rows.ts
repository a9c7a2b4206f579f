// Turning better-sqlite3's raw rows (arrays) into objects, shared by the main connection
// (connect.ts), the reader thread's replies (reader.ts) and its renderers (reader-thread.ts).

export type RowBuilder = (values: unknown[]) => unknown;

/**
 * better-sqlite3 builds each result row as an object through V8's slow property-by-property
 * API; rows as arrays come back at about 60% of the cost. A function compiled once per
 * statement turns each array into a plain object literal, which V8 creates almost for free.
 */
export function rowBuilder(columns: string[]): RowBuilder {
  // In a literal, the key "__proto__" would set the prototype: such rows get own properties.
  if (columns.includes('__proto__')) return (v) => Object.fromEntries(columns.map((name, i) => [name, v[i]]));
  const fields = columns.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ');
  return new Function('v', `return { ${fields} };`) as RowBuilder;
}

/**
 * A builder for one statement's rows that follows their width: SQLite re-prepares a statement
 * after a schema change (another process migrating), so a `select *` can come back with other
 * columns, and `columns` (the statement's current names) is asked again when the width changes.
 */
export function statementRowBuilder(columns: () => string[]): RowBuilder {
  let width = -1;
  let build: RowBuilder = () => undefined;
  return (values) => {
    if (values.length !== width) {
      const names = columns();
      width = names.length;
      build = rowBuilder(names);
    }
    return build(values);
  };
}
