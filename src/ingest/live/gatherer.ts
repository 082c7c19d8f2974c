// On the ingest thread: rows gathered for the store's next batch, with their highest hit-log sequence number, and
// when to cut it: once it holds so many records or so long after its first (by default 5,000 or a second, the write
// buffer's batch). Record files (load-batches.ts, larger) and INSERT batches (insert-batches.ts) gather this way and
// differ only in what they make of a cut. A row may hold several records (a hit-log group's bytes).

export interface GatherOptions {
  /** Cut once this many records wait. */
  maxRecords?: number;
  /** Cut at the latest this long after the first record. */
  maxWaitMs?: number;
}

export class Gatherer<Row> {
  private rows: Row[] = [];
  private records = 0;
  private maxSeq = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly maxRecords: number;
  private readonly maxWaitMs: number;

  /** `cut` is called when a batch is due (full, or its time is up); it takes the rows with take(). */
  constructor(
    private readonly cut: () => void,
    options: GatherOptions = {},
  ) {
    this.maxRecords = options.maxRecords ?? 5000;
    this.maxWaitMs = options.maxWaitMs ?? 1000;
  }

  /** Records gathered, not yet taken. */
  get size(): number {
    return this.records;
  }

  /** Adds a row of `records` records (one, unless the row is a group of them) whose highest sequence number is `seq`. */
  add(row: Row, seq: number, records = 1): void {
    this.rows.push(row);
    this.records += records;
    if (seq > this.maxSeq) this.maxSeq = seq;
    if (this.records >= this.maxRecords) this.cut();
    else this.timer ??= setTimeout(() => this.cut(), this.maxWaitMs);
  }

  /**
   * The rows gathered, how many records they hold and their highest sequence number (0: none logged), or undefined
   * if none; gathering starts anew.
   */
  take(): { rows: Row[]; records: number; seq: number } | undefined {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.rows.length === 0) return undefined;
    const taken = { rows: this.rows, records: this.records, seq: this.maxSeq };
    this.rows = [];
    this.records = 0;
    this.maxSeq = 0;
    return taken;
  }
}
