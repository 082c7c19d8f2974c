// The entries of an export zip (a file: a zip's directory is at its end), each opened as a stream in turn, for the
// importers of daily aggregates (Plausible's and Fathom's exports). Entries are never held whole.

import yauzl, { type Entry, type ZipFile } from 'yauzl';

export interface ZipEntries {
  /** Names and sizes only: the directory at the zip's end. */
  entries: Entry[];
  open(entry: Entry): Promise<NodeJS.ReadableStream>;
  close(): void;
}

/** Opens the zip at `path`; `fail(message)` makes the error thrown for what is no readable zip. */
export async function zipEntries(path: string, fail: (message: string) => Error): Promise<ZipEntries> {
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (err, z) => (err || !z ? reject(fail(`not a zip file: ${err?.message ?? 'unreadable'}`)) : resolve(z))),
  );
  const entries: Entry[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: Entry) => {
        entries.push(entry);
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.on('error', (err) => reject(fail(`the zip is damaged: ${(err as Error).message}`)));
      zip.readEntry();
    });
  } catch (err) {
    zip.close();
    throw err;
  }
  return {
    entries,
    open: (entry) =>
      new Promise<NodeJS.ReadableStream>((resolve, reject) =>
        zip.openReadStream(entry, (err, s) => (err || !s ? reject(fail(`cannot read ${entry.fileName}: ${err?.message}`)) : resolve(s))),
      ),
    close: () => zip.close(),
  };
}
