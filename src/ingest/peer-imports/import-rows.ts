// Everything an import wrote, whatever its kind: removed when it is deleted, when it fails, and when it is found
// left running by a process that died (src/ingest/peer-imports/import-sweeper.ts). Removing twice is harmless.

import type { EventStore, ImportRecord } from '../../store/types.js';

/** An Umami import's visits have ids from its base to base + 2^32 - 1 (src/store/types.ts, ImportRecord). */
const VISIT_RANGE = (1n << 32n) - 1n;

export async function removeImportRows(events: EventStore, record: ImportRecord): Promise<void> {
  if (record.kind !== 'umami') await events.deleteImportedDays(record.siteId, record.id);
  else await events.deleteVisitRange(record.siteId, record.visitIdBase, record.visitIdBase + VISIT_RANGE);
}
