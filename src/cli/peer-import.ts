// `plumb import umami|plausible|fathom FILE --site ID`, `plumb import list --site ID`, `plumb import delete IMPORT_ID`: another
// product's export streamed to /admin/imports (never read whole), with a progress bar of the bytes sent.

import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Zip, ZipPassThrough } from 'fflate';
import type { AdminClient } from './admin-client.js';
import { progressBar } from './import.js';

export interface PeerImportJson {
  id: string;
  site_id: string;
  kind: string;
  file_name: string;
  status: string;
  imported: number;
  rejected: number;
  first_hit_at: string | null;
  last_hit_at: string | null;
  created_at: string;
  /** Why a failed import failed (null otherwise; absent from servers before it was added). */
  failure_reason?: string | null;
  errors?: { line: number; message: string; file?: string }[];
  replaced?: string[];
  overlaps?: string[];
}

const KINDS = { umami: 'text/csv', plausible: 'application/zip', fathom: 'application/zip' } as const;
export type PeerKind = keyof typeof KINDS;

/** The CSV files of a folder (Fathom's export unpacked), sorted, with their sizes. */
async function csvFiles(dir: string): Promise<{ path: string; name: string; size: number }[]> {
  const names = (await readdir(dir)).filter((n) => n.toLowerCase().endsWith('.csv')).sort();
  return Promise.all(names.map(async (name) => ({ path: join(dir, name), name, size: (await stat(join(dir, name))).size })));
}

/** A folder's CSV files as a zip (stored, not compressed), made a file chunk at a time. */
async function* zipped(files: { path: string; name: string }[]): AsyncGenerator<Uint8Array> {
  const out: Uint8Array[] = [];
  let failure: Error | undefined;
  const zip = new Zip((err, chunk) => {
    if (err) failure = err;
    else out.push(chunk);
  });
  const drain = function* () {
    if (failure) throw failure;
    while (out.length > 0) yield out.shift()!;
  };
  for (const f of files) {
    const entry = new ZipPassThrough(f.name);
    zip.add(entry);
    for await (const chunk of createReadStream(f.path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
      entry.push(chunk);
      yield* drain();
    }
    entry.push(new Uint8Array(0), true);
    yield* drain();
  }
  zip.end();
  yield* drain();
}

/**
 * Streams `file` (Umami's CSV export or Umami Cloud's .csv.gz, Plausible's export zip, Fathom's export zip or its unpacked folder, zipped
 * first into a temporary file, a chunk at a time) to the server for `siteId`, showing the share of bytes sent.
 */
export async function importPeerFile(client: AdminClient, kind: PeerKind, file: string, siteId: string, progress: NodeJS.WriteStream): Promise<PeerImportJson> {
  if (!(await stat(file)).isDirectory()) return upload(client, kind, file, basename(file), siteId, progress);
  if (kind !== 'fathom') throw Object.assign(new Error('is a folder; give the export file'), { code: 'EISDIR' });
  const dir = await mkdtemp(join(tmpdir(), 'plumb-fathom-'));
  try {
    const zip = join(dir, 'export.zip');
    await pipeline(Readable.from(zipped(await csvFiles(file))), createWriteStream(zip));
    return await upload(client, kind, zip, `${basename(file)}.zip`, siteId, progress);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function upload(client: AdminClient, kind: PeerKind, file: string, fileName: string, siteId: string, progress: NodeJS.WriteStream): Promise<PeerImportJson> {
  const size = (await stat(file)).size;
  const bar = progressBar(progress, 'uploading');
  let sent = 0;
  const stream = createReadStream(file, { highWaterMark: 256 * 1024 });
  async function* chunks() {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      sent += chunk.length;
      bar.update(sent, size);
      yield chunk;
    }
  }
  try {
    const query = new URLSearchParams({ site_id: siteId, file_name: fileName });
    // Umami Cloud's export is a .csv.gz: named as what it is (the server knows gzip by its bytes either way).
    const type = kind === 'umami' && /\.gz$/i.test(fileName) ? 'application/gzip' : KINDS[kind];
    return await client.requestStream<PeerImportJson>(`/admin/imports/${kind}?${query}`, chunks(), { 'content-type': type });
  } finally {
    bar.done();
    stream.destroy();
  }
}

export function describePeerImport(i: PeerImportJson): string {
  const range = i.first_hit_at ? `, ${i.first_hit_at} to ${i.last_hit_at}` : '';
  const what = i.kind === 'umami' ? 'hits' : i.kind === 'fathom' ? 'hourly rows' : 'daily rows';
  const status = i.status === 'failed' && i.failure_reason ? `failed (${i.failure_reason})` : i.status;
  const lines = [`import ${i.id} (${i.kind}, ${i.file_name}): ${status}, ${i.imported} ${what} imported, ${i.rejected} rejected${range}`];
  for (const e of (i.errors ?? []).slice(0, 20)) lines.push(`  ${e.file ? `${e.file} ` : ''}line ${e.line}: ${e.message}`);
  if ((i.errors?.length ?? 0) > 20) lines.push(`  ... and ${i.errors!.length - 20} more`);
  for (const id of i.replaced ?? []) lines.push(`  replaced import ${id}: the same export, imported before`);
  for (const id of i.overlaps ?? []) lines.push(`  overlaps import ${id} in time (delete one with plumb import delete ID if they hold the same events)`);
  return lines.join('\n');
}
