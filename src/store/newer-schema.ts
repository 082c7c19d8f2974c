// The refusal every store's migrations share: a database whose schema a newer release of Plumb wrote.

/** The database was written by a newer release: its schema has versions this code does not know. */
export class NewerSchemaError extends Error {
  override readonly name = 'NewerSchemaError';
  constructor(
    readonly found: number,
    readonly known: number,
    /** Which database, for the message at start: the embedded file's path is added by the caller; others name themselves. */
    readonly database?: string,
  ) {
    super(
      `${database ? `${database}: ` : ''}the database has schema version ${found}, written by a newer release of Plumb; this release knows versions up to ` +
        `${known}. It was left as it is: run the release that wrote it (or a newer one), or restore a backup made by this release`,
    );
  }
}

/**
 * Refuses (NewerSchemaError) a database whose applied versions go past `known`, this code's newest: called by every
 * store's migrations before they change anything.
 */
export function refuseNewerSchema(applied: Iterable<number>, known: number, database?: string): void {
  const found = Math.max(0, ...applied);
  if (found > known) throw new NewerSchemaError(found, known, database);
}
