// The import thread's reader: parses each chunk's NDJSON file into columns (src/ingest/chunk-columns.ts) as soon as
// the chunk arrives, so that reading and parsing the next chunk run beside the import thread's work on this one.

import { parentPort } from 'node:worker_threads';
import { readColumns, transferList } from './chunk-columns.js';
import type { FromReader, ToReader } from './chunk-reader.js';

const port = parentPort!;

port.on('message', (message: ToReader) => {
  readColumns(message.file, message.firstLine).then(
    (columns) => port.postMessage({ id: message.id, columns } satisfies FromReader, transferList(columns)),
    (err: unknown) => port.postMessage({ id: message.id, error: (err as Error)?.message ?? String(err) } satisfies FromReader),
  );
});
