// One part of an import file indexed on a thread of its own (ndjson-file.ts, NdjsonFile.forImport): how far it has
// read as it goes, then its index, back to the thread that asked, the index's arrays moved rather than copied.

import { parentPort, workerData } from 'node:worker_threads';
import { flatTimestampsIn, timestampOf } from './line-time.js';
import { indexPart, type FromIndexThread } from './ndjson-file.js';
import { nameThread } from '../thread-name.js';

nameThread('plumb-index');

/** Bytes read between two reports of how far the part is read (and at its end). */
const REPORT_BYTES = 8 * 1024 * 1024;

const send = (message: FromIndexThread, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(message, transfer);
const { path, start, end } = workerData as { path: string; start: number; end: number };
let reported = 0;
const index = await indexPart(path, start, end, timestampOf, flatTimestampsIn, (bytes) => {
  if (bytes - reported < REPORT_BYTES && bytes < end - start) return;
  reported = bytes;
  send({ t: 'read', bytes });
});
send({ t: 'index', index }, [index.offsets.buffer, index.lengths.buffer, index.numbers.buffer, index.timestamps.buffer] as ArrayBuffer[]);
