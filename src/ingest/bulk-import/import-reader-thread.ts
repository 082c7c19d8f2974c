// The import thread's reader: parses each chunk's NDJSON file into columns (src/ingest/bulk-import/chunk-columns.ts) as
// soon as the chunk arrives, and places its new addresses, so that this part of a chunk's work runs beside the import
// thread's work on the chunk before.

import { parentPort } from 'node:worker_threads';
import { placer, readColumns, transferList } from './chunk-columns.js';
import type { FromReader, ToReader } from './chunk-reader.js';
import { GeoLookup } from '../enrich/geo.js';
import { nameThread } from '../../thread-name.js';

nameThread('plumb-reader');

const port = parentPort!;
// With the process's shared copy of the geo databases (GeoLookup.share), as the import thread has.
const place = placer(await GeoLookup.open());

/** Chunks are read one after another, in the order they came: the thread holds one chunk's columns at a time. */
let reading = Promise.resolve();

port.on('message', (message: ToReader) => {
  reading = reading.then(() =>
    readColumns(message.file, message.firstLine, place).then(
      (columns) => port.postMessage({ id: message.id, columns } satisfies FromReader, transferList(columns)),
      (err: unknown) => port.postMessage({ id: message.id, error: (err as Error)?.message ?? String(err) } satisfies FromReader),
    ),
  );
});
