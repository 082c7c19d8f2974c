// `plumb import FILE` and the import half of `plumb demo`: NDJSON sent to /admin/import in chunks that share
// one import id (so visits continue across chunks), oldest hits first, with a progress bar.

import { randomUUID } from 'node:crypto';
import type { AdminClient } from './admin-client.js';

export interface ImportSummary {
  imported: number;
  rejected: number;
  errors: { line: number; message: string }[];
}

const CHUNK_LINES = 10_000;

/** A one-line progress bar on a terminal; silent when output is not a terminal. */
export function progressBar(stream: NodeJS.WriteStream, label: string) {
  const tty = stream.isTTY === true;
  let last = -1;
  return {
    update(done: number, total: number) {
      if (!tty) return;
      const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
      if (pct === last) return;
      last = pct;
      const width = 30;
      const filled = Math.round((pct / 100) * width);
      stream.write(`\r${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${pct}% ${done.toLocaleString('en')}/${total.toLocaleString('en')}`);
    },
    done() {
      if (tty && last >= 0) stream.write('\n');
    },
  };
}

function timestampOf(line: string): number {
  try {
    const t = (JSON.parse(line) as { timestamp?: unknown }).timestamp;
    const ms = typeof t === 'string' ? Date.parse(t.includes('T') ? t : `${t.replace(' ', 'T')}Z`) : NaN;
    return Number.isNaN(ms) ? -Infinity : ms;
  } catch {
    return -Infinity; // the server reports the line; sending it first keeps its report early
  }
}

/**
 * Sends `text` (NDJSON) in chunks. Lines are sorted by timestamp first (stably, so a sorted file is sent as
 * is); errors come back with the line numbers of the original file.
 */
export async function importNdjson(
  client: AdminClient,
  text: string,
  onProgress: (done: number, total: number) => void = () => undefined,
): Promise<ImportSummary> {
  const lines = text.split('\n').map((line, i) => ({ line, number: i + 1 })).filter((l) => l.line.trim() !== '');
  const order = lines.map((l) => ({ ...l, at: timestampOf(l.line) }));
  order.sort((a, b) => a.at - b.at);
  const id = randomUUID();
  const summary: ImportSummary = { imported: 0, rejected: 0, errors: [] };
  onProgress(0, order.length);
  for (let i = 0; i < order.length; i += CHUNK_LINES) {
    const chunk = order.slice(i, i + CHUNK_LINES);
    const result = await client.requestText<ImportSummary>('/admin/import', chunk.map((c) => c.line).join('\n'), {
      'content-type': 'application/x-ndjson',
      'x-plumb-import-id': id,
      'x-plumb-first-line': '1',
    });
    summary.imported += result.imported;
    summary.rejected += result.rejected;
    for (const e of result.errors) summary.errors.push({ line: chunk[e.line - 1]?.number ?? e.line, message: e.message });
    onProgress(Math.min(i + CHUNK_LINES, order.length), order.length);
  }
  summary.errors.sort((a, b) => a.line - b.line);
  return summary;
}
