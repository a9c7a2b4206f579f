import type { Kysely, RawBuilder } from 'kysely';

/** An index of the migrations that make indexes partial: its columns and the rows it is to hold. */
export interface PartialIndex {
  name: string;
  columns: readonly string[];
  where: RawBuilder<boolean>;
}

/**
 * Each index of `table` dropped and made again: partial (a migration's up) or over every row (its
 * down). Shared by migrations that have already run: change it only in ways that send the same SQL.
 */
export async function remakeIndexes(
  db: Kysely<any>,
  table: string,
  indexes: readonly PartialIndex[],
  partial: boolean,
): Promise<void> {
  for (const i of indexes) {
    await db.schema.dropIndex(i.name).execute();
    const index = db.schema
      .createIndex(i.name)
      .on(table)
      .columns([...i.columns]);
    await (partial ? index.where(i.where) : index).execute();
  }
}
