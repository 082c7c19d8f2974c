// One part of an import file indexed on a thread of its own (ndjson-file.ts, NdjsonFile.forImport): its index goes
// back to the thread that asked, its arrays moved rather than copied.

import { parentPort, workerData } from 'node:worker_threads';
import { flatTimestampAt, timestampOf } from './line-time.js';
import { indexPart } from './ndjson-file.js';
import { nameThread } from '../thread-name.js';

nameThread('plumb-index');

const { path, start, end } = workerData as { path: string; start: number; end: number };
const index = await indexPart(path, start, end, timestampOf, flatTimestampAt);
parentPort!.postMessage(index, [index.offsets.buffer, index.lengths.buffer, index.numbers.buffer, index.timestamps.buffer] as ArrayBuffer[]);
