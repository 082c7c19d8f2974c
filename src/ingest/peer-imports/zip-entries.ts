// The entries of an export zip (a file: a zip's directory is at its end), each opened as a stream in turn, for the
// importers of daily aggregates (Plausible's and Fathom's exports). Entries are never held whole. Every entry's bytes
// are checked against the size and CRC-32 the zip declares for it before anything is imported (yauzl checks no CRC,
// and a zip altered after it was made reads without a complaint otherwise), and the export's content is digested so
// that the same export sent again, zipped anew, is known to be the same (src/http/peers/import-service.ts). What a zip
// may hold is bounded before anything is inflated (entries, their names, their declared sizes: a zip bomb is refused
// by its directory), and no entry inflates past its declared size.

import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { FREE_INFLATED_BYTES, MAX_INFLATE_RATIO } from './gzip-body.js';

/** Entries a zip may have: an export has about ten files (Fathom's newer one, one per dimension, a few dozen). */
export const MAX_ZIP_ENTRIES = 1000;
/**
 * Bytes an export's files may inflate to, together: far above real exports (a large site's Plausible export is
 * hundreds of MB of CSV), and what reading it twice (checked, then imported) costs stays bounded.
 */
export const MAX_INFLATED_BYTES = 8 * 1024 ** 3;

export interface ZipEntries {
  /** Names and sizes only: the directory at the zip's end (folders included, their names ending in `/`). */
  entries: Entry[];
  /**
   * SHA-256 of the export's CSV files: each one's name (relative to the folder all of them share, so a folder's
   * files zipped by the CLI and the export's own zip of that folder are the same) and uncompressed bytes, in name
   * order. The zip's own bytes (times, compression, order of entries) do not count.
   */
  digest: string;
  /** The entry's bytes; the stream fails with `fail`'s error when they do not match what the zip declares. */
  open(entry: Entry): Promise<Readable>;
  close(): void;
}

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');
const isFile = (entry: Entry) => !entry.fileName.endsWith('/');
/** Archives inside the export: never opened, so never a way around the bounds. */
const ARCHIVE_NAME = /\.(zip|gz|tgz|tar|7z|rar|bz2|xz|zst)$/i;
/** The first bytes of a zip (local header, empty zip, spanned) or gzip file, whatever its name says. */
const isArchiveStart = (head: Buffer) =>
  (head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && [0x0304, 0x0506, 0x0708].includes(head.readUInt16BE(2))) ||
  (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b);
const bytes = (n: number) => n.toLocaleString('en');

/**
 * Opens the zip at `path` and reads every file entry once to its end, checking its size and CRC-32 and digesting
 * it; `fail(message)` makes the error thrown for what is no readable zip or a damaged entry, which it names.
 */
export async function zipEntries(path: string, fail: (message: string) => Error): Promise<ZipEntries> {
  // Sizes are checked here, entry by entry, so that a wrong one is reported with the entry's name (yauzl's own
  // check fails the whole directory without it).
  const zip = await new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false, validateEntrySizes: false }, (err, z) =>
      (err || !z ? reject(fail(`not a zip file: ${err?.message ?? 'unreadable'}`)) : resolve(z))),
  );
  const damaged = (entry: Entry, why: string) =>
    fail(`${entry.fileName} in the zip is damaged (${why}): the file was altered or cut short after it was made; nothing was imported, export it again`);
  const refused = (why: string) => fail(`${why}: not an export; nothing was imported`);
  const nested = (entry: Entry) => refused(`${entry.fileName} in the zip is itself an archive (Plumb reads an export's CSV files, not archives inside it)`);

  const open = (entry: Entry, digest?: (hash: Buffer) => void) =>
    new Promise<Readable>((resolve, reject) =>
      zip.openReadStream(entry, (err, raw) => {
        if (err || !raw) return reject(fail(`cannot read ${entry.fileName}: ${err?.message}`));
        let size = 0;
        let crc = 0;
        const hash = digest ? createHash('sha256') : undefined;
        const checked = new Transform({
          transform(chunk: Buffer, _encoding, done) {
            if (size === 0 && isArchiveStart(chunk)) return done(nested(entry));
            size += chunk.length;
            // Stopped as soon as it is longer than declared: a small entry cannot inflate into gigabytes.
            if (size > entry.uncompressedSize) return done(damaged(entry, `it holds more than the ${entry.uncompressedSize} bytes the zip declares`));
            crc = crc32(chunk, crc);
            hash?.update(chunk);
            done(null, chunk);
          },
          flush(done) {
            if (size !== entry.uncompressedSize) return done(damaged(entry, `it holds ${size} bytes, the zip declares ${entry.uncompressedSize}`));
            if (crc >>> 0 !== entry.crc32 >>> 0) return done(damaged(entry, `its CRC-32 is ${hex(crc)}, the zip declares ${hex(entry.crc32)}`));
            if (hash) digest!(hash.digest());
            done();
          },
        });
        // Inflating fails on altered compressed bytes: that is a damaged entry too.
        raw.on('error', (e: Error) => checked.destroy(damaged(entry, e.message)));
        // A reader that stops early (a table without its columns) lets go of the entry's file reads.
        checked.on('close', () => raw.destroy());
        raw.pipe(checked);
        resolve(checked);
      }),
    );

  try {
    // Judged from the directory alone, before a byte is inflated: an entry never inflates past its declared size
    // (open's check), so declared sizes within the bounds keep the work within them whatever the zip holds.
    if (zip.entryCount > MAX_ZIP_ENTRIES) throw refused(`the zip has ${bytes(zip.entryCount)} entries, more than the ${bytes(MAX_ZIP_ENTRIES)} an export may have`);
    const inflatedAtMost = Math.min(MAX_INFLATED_BYTES, Math.max(FREE_INFLATED_BYTES, zip.fileSize * MAX_INFLATE_RATIO));
    const entries: Entry[] = [];
    const names = new Set<string>();
    let declared = 0;
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: Entry) => {
        if (isFile(entry) && entry.compressionMethod === 0 && !entry.isEncrypted() && entry.compressedSize !== entry.uncompressedSize) {
          return reject(damaged(entry, `stored uncompressed, yet its sizes differ: ${entry.compressedSize} and ${entry.uncompressedSize} bytes`));
        }
        // The same name twice is one file counted twice (or one hiding the other), never an export.
        if (names.has(entry.fileName)) return reject(refused(`${entry.fileName} is in the zip more than once`));
        names.add(entry.fileName);
        if (isFile(entry) && ARCHIVE_NAME.test(entry.fileName)) return reject(nested(entry));
        if (isFile(entry)) declared += entry.uncompressedSize;
        if (declared > inflatedAtMost) {
          return reject(refused(declared > MAX_INFLATED_BYTES
            ? `its files inflate to more than ${bytes(MAX_INFLATED_BYTES)} bytes, the most an import reads`
            : `its files inflate to more than ${MAX_INFLATE_RATIO} times the zip's ${bytes(zip.fileSize)} bytes (a zip bomb's mark; CSV exports compress 3-30 times)`));
        }
        entries.push(entry);
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.on('error', (err) => reject(fail(`the zip is damaged: ${(err as Error).message}`)));
      zip.readEntry();
    });

    // Every file entry is read once before the importer reads any: a damaged one refuses the export before a row
    // is written or an event created. Inflating twice costs far less than parsing the CSV once.
    const csv = entries.filter((e) => isFile(e) && /\.csv$/i.test(e.fileName));
    const shared = commonFolder(csv.map((e) => e.fileName));
    const parts: [string, string][] = [];
    for (const entry of entries.filter(isFile)) {
      const isCsv = csv.includes(entry);
      const stream = await open(entry, isCsv ? (hash) => parts.push([entry.fileName.slice(shared.length), hash.toString('hex')]) : undefined);
      await finished(stream.resume());
    }
    parts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    const digest = createHash('sha256').update(JSON.stringify(parts)).digest('hex');
    return { entries, digest, open: (entry) => open(entry), close: () => zip.close() };
  } catch (err) {
    zip.close();
    throw err;
  }
}

/** The folder (`a/b/`) all these names are in, or `''`. */
function commonFolder(names: string[]): string {
  if (names.length === 0) return '';
  let folder = names[0]!.slice(0, names[0]!.lastIndexOf('/') + 1);
  for (const name of names) {
    while (folder !== '' && !name.startsWith(folder)) folder = folder.slice(0, folder.lastIndexOf('/', folder.length - 2) + 1);
  }
  return folder;
}
