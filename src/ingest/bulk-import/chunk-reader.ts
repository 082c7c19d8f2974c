// The import thread's side of its reader thread (src/ingest/bulk-import/import-reader-thread.ts): a chunk's file in,
// its lines parsed into columns out. The reader is started on first use and again after it stopped.

import type { Worker } from 'node:worker_threads';
import type { ChunkColumns } from './chunk-columns.js';
import { startWorker } from '../../start-worker.js';

export interface ToReader {
  id: number;
  file: string;
  firstLine: number;
}

export type FromReader = { id: number; columns: ChunkColumns } | { id: number; error: string };

/**
 * The reader's heap bound: it holds the columns of the chunk it is reading (a few MB for 100,000 lines; 80 MB of
 * heap and 24 MB of arrays for a 64 MiB body of 480,000 short lines whose 1.4 million texts all differ).
 */
const READER_HEAP_MB = 256;

export class ChunkReader {
  private thread: Worker | undefined;
  private lastId = 0;
  private readonly waiting = new Map<number, { resolve: (c: ChunkColumns) => void; reject: (err: Error) => void }>();

  /** The lines of the NDJSON file `file`, numbered from `firstLine`, parsed on the reader thread. */
  read(file: string, firstLine: number): Promise<ChunkColumns> {
    const thread = (this.thread ??= this.start());
    const id = ++this.lastId;
    // The reader keeps its thread alive while it has reads to answer, and only then.
    thread.ref();
    return new Promise<ChunkColumns>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      thread.postMessage({ id, file, firstLine } satisfies ToReader);
    });
  }

  private start(): Worker {
    const thread = startWorker(import.meta.url, 'import-reader-thread', undefined, { maxOldGenerationSizeMb: READER_HEAP_MB });
    thread.on('message', (message: FromReader) => {
      const waiting = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (this.waiting.size === 0) thread.unref();
      if ('error' in message) waiting?.reject(new Error(message.error));
      else waiting?.resolve(message.columns);
    });
    const stopped = (err: Error) => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    };
    thread.on('error', stopped);
    thread.on('exit', () => stopped(new Error('the import reader thread stopped')));
    return thread;
  }
}
