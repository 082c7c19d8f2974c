// `plumb import umami|plausible FILE --site ID`, `plumb import list --site ID`, `plumb import delete IMPORT_ID`: another
// product's export streamed to /admin/imports (never read whole), with a progress bar of the bytes sent.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
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
  errors?: { line: number; message: string; file?: string }[];
  replaced?: string[];
  overlaps?: string[];
}

const KINDS = { umami: 'text/csv', plausible: 'application/zip' } as const;
export type PeerKind = keyof typeof KINDS;

/**
 * Streams `file` (Umami's CSV export or Plausible's export zip) to the server for `siteId`, showing the share of
 * bytes sent.
 */
export async function importPeerFile(client: AdminClient, kind: PeerKind, file: string, siteId: string, progress: NodeJS.WriteStream): Promise<PeerImportJson> {
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
    const query = new URLSearchParams({ site_id: siteId, file_name: basename(file) });
    return await client.requestStream<PeerImportJson>(`/admin/imports/${kind}?${query}`, chunks(), { 'content-type': KINDS[kind] });
  } finally {
    bar.done();
    stream.destroy();
  }
}

export function describePeerImport(i: PeerImportJson): string {
  const range = i.first_hit_at ? `, ${i.first_hit_at} to ${i.last_hit_at}` : '';
  const what = i.kind === 'plausible' ? 'daily rows' : 'hits';
  const lines = [`import ${i.id} (${i.kind}, ${i.file_name}): ${i.status}, ${i.imported} ${what} imported, ${i.rejected} rejected${range}`];
  for (const e of (i.errors ?? []).slice(0, 20)) lines.push(`  ${e.file ? `${e.file} ` : ''}line ${e.line}: ${e.message}`);
  if ((i.errors?.length ?? 0) > 20) lines.push(`  ... and ${i.errors!.length - 20} more`);
  for (const id of i.replaced ?? []) lines.push(`  replaced import ${id} of the same file`);
  for (const id of i.overlaps ?? []) lines.push(`  overlaps import ${id} in time (delete one with plumb import delete ID if they hold the same events)`);
  return lines.join('\n');
}
