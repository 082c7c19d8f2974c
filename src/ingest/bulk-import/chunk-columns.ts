// A chunk's NDJSON lines parsed into columns: numbers in typed arrays and each distinct text once in a table. The
// import's reader thread (src/ingest/bulk-import/import-reader-thread.ts) makes them and the import thread turns them
// back into hits; typed arrays cross threads without a copy and a text is cloned once per chunk, not once per hit.

import type { IncomingHit } from '../../domain/hits.js';
import type { PropList } from '../../domain/props.js';
import { placeCsv } from '../../store/event-csv.js';
import type { GeoFields, GeoLookup } from '../enrich/geo.js';
import { parseImportLine, type ImportError } from '../line-import.js';
import { eachLine } from './import-body.js';

/** A hit's texts, as indices into ChunkColumns.texts, in this order (no event name: -1). */
const SITE = 0;
const URL = 1;
const REFERRER = 2;
const AGENT = 3;
const IP = 4;
const EVENT = 5;
const FIELDS = 6;

export interface ChunkColumns {
  /** Hits parsed, in the order of their lines. */
  count: number;
  /** Each hit's line number. */
  lines: Float64Array;
  /** Each hit's time, ms since the epoch. */
  times: Float64Array;
  /** 1 for an event, 0 for a pageview. */
  events: Uint8Array;
  /** FIELDS indices into `texts` a hit. */
  fields: Int32Array;
  /** An event's value in cents; NaN when it has none. */
  values: Float64Array;
  texts: string[];
  /** Custom properties of the hits that have some, by row. */
  props: Map<number, PropList>;
  /** For each text that is a hit's address, its place as a hit's CSV fields (placeCsv) if the reader placed it. */
  places: (string | null)[];
  /** Lines that are not hits, with what is wrong with them (blank lines are skipped, but numbered). */
  errors: ImportError[];
}

/** The buffers a ChunkColumns is moved with (postMessage's transfer list). */
export function transferList(c: ChunkColumns): ArrayBuffer[] {
  return [c.lines.buffer, c.times.buffer, c.events.buffer, c.fields.buffer, c.values.buffer] as ArrayBuffer[];
}

/**
 * Places addresses as the import thread does (placeCsv of a geo look-up): each place's CSV fields made once, for
 * the one object GeoLookup answers for it.
 */
export function placer(geo: GeoLookup): (ip: string) => string {
  const fields = new WeakMap<Readonly<GeoFields>, string>();
  return (ip) => {
    const place = geo.lookup(ip);
    let csv = fields.get(place);
    if (csv === undefined) fields.set(place, (csv = placeCsv(place)));
    return csv;
  };
}

/** Columns built a line at a time, growing by doubling. */
class ColumnsBuilder {
  private size = 4096;
  private count = 0;
  private lines = new Float64Array(this.size);
  private times = new Float64Array(this.size);
  private events = new Uint8Array(this.size);
  private fields = new Int32Array(this.size * FIELDS);
  private values = new Float64Array(this.size);
  private readonly texts: string[] = [];
  private readonly props = new Map<number, PropList>();
  private readonly places: (string | null)[] = [];
  private readonly index = new Map<string, number>();
  /** The text index of the last line's site id, and of the last user agent seen with each address, by its text index. */
  private lastSite = -1;
  private readonly agentAt: number[] = [];
  private readonly errors: ImportError[] = [];
  private next: number;

  /** `place`: an address's place as CSV fields, worked out here rather than on the import thread. */
  constructor(
    firstLine: number,
    private readonly place?: (ip: string) => string,
  ) {
    this.next = firstLine;
  }

  /** A line of the chunk: its hit (parseImportLine) or its error, numbered; a blank line is skipped but counted. */
  add(text: string): void {
    const line = this.next++;
    if (text.trim() === '') return;
    let hit: IncomingHit;
    try {
      hit = parseImportLine(text);
    } catch (err) {
      this.errors.push({ line, message: (err as Error).message });
      return;
    }
    if (this.count === this.size) this.grow();
    const i = this.count++;
    this.lines[i] = line;
    this.times[i] = hit.timestamp.getTime();
    this.events[i] = hit.type === 'event' ? 1 : 0;
    const f = i * FIELDS;
    // A chunk is nearly always one site's: its id is compared with the last line's before it is looked up.
    const site = hit.siteId === this.texts[this.lastSite] ? this.lastSite : (this.lastSite = this.text(hit.siteId));
    this.fields[f + SITE] = site;
    this.fields[f + URL] = this.text(hit.url);
    this.fields[f + REFERRER] = this.text(hit.referrer);
    const ip = (this.fields[f + IP] = this.text(hit.ip));
    // A visitor's hits share an address and a user agent: the agent is compared with the last one seen at this
    // address before it is looked up. Looking a long text up hashes it whole (each line's texts are new strings).
    const known = this.agentAt[ip];
    const agent = known !== undefined && hit.userAgent === this.texts[known] ? known : (this.agentAt[ip] = this.text(hit.userAgent));
    this.fields[f + AGENT] = agent;
    if (this.place && this.places[ip] === null) this.places[ip] = this.place(hit.ip);
    this.fields[f + EVENT] = hit.eventName === undefined ? -1 : this.text(hit.eventName);
    this.values[i] = hit.value ?? NaN;
    if (hit.props !== undefined) this.props.set(i, hit.props);
  }

  columns(): ChunkColumns {
    const n = this.count;
    // Copies of the used part: what crosses threads is the chunk's size, not the last doubling's.
    return {
      count: n,
      lines: this.lines.slice(0, n),
      times: this.times.slice(0, n),
      events: this.events.slice(0, n),
      fields: this.fields.slice(0, n * FIELDS),
      values: this.values.slice(0, n),
      texts: this.texts,
      props: this.props,
      places: this.places,
      errors: this.errors,
    };
  }

  private text(value: string): number {
    let i = this.index.get(value);
    if (i === undefined) {
      i = this.texts.push(value) - 1;
      this.places.push(null);
      this.index.set(value, i);
    }
    return i;
  }

  private grow(): void {
    this.size *= 2;
    const more = <T extends Float64Array | Int32Array | Uint8Array>(a: T, make: (n: number) => T, per = 1): T => {
      const b = make(this.size * per);
      b.set(a);
      return b;
    };
    this.lines = more(this.lines, (n) => new Float64Array(n));
    this.times = more(this.times, (n) => new Float64Array(n));
    this.events = more(this.events, (n) => new Uint8Array(n));
    this.fields = more(this.fields, (n) => new Int32Array(n), FIELDS);
    this.values = more(this.values, (n) => new Float64Array(n));
  }
}

/** Lines as columns; `firstLine` is the number of the first; `place` places addresses (placeCsv of a GeoLookup). */
export function columnsOf(lines: Iterable<string>, firstLine: number, place?: (ip: string) => string): ChunkColumns {
  const builder = new ColumnsBuilder(firstLine, place);
  for (const text of lines) builder.add(text);
  return builder.columns();
}

/** An NDJSON file's lines as columns, read line by line (import-body.ts, eachLine). */
export async function readColumns(file: string, firstLine: number, place?: (ip: string) => string): Promise<ChunkColumns> {
  const builder = new ColumnsBuilder(firstLine, place);
  await eachLine(file, (text) => builder.add(text));
  return builder.columns();
}

/**
 * The hit on row `i` of `c`, as parseImportLine made it, made anew each time it is asked for: the import thread keeps a
 * chunk's rows as these columns rather than as a hundred thousand objects that outlive many young-generation
 * collections, each of which copied them (docs/benchmarks.md, "Import: measurements behind the code"). With `into`, the
 * hit is written over that object (and its Date) instead: for a caller that is done with one row's hit before it reads
 * the next, and keeps neither the object nor its Date.
 */
export function hitAt(c: ChunkColumns, i: number, into?: IncomingHit): IncomingHit {
  const { texts, fields } = c;
  const f = i * FIELDS;
  const hit = into ?? { type: 'pageview', siteId: '', timestamp: new Date(0), url: '', referrer: '', userAgent: '', ip: '' };
  hit.type = c.events[i] === 1 ? 'event' : 'pageview';
  hit.siteId = texts[fields[f + SITE]!]!;
  hit.timestamp.setTime(c.times[i]!);
  hit.url = texts[fields[f + URL]!]!;
  hit.referrer = texts[fields[f + REFERRER]!]!;
  hit.userAgent = texts[fields[f + AGENT]!]!;
  hit.ip = texts[fields[f + IP]!]!;
  // A pageview has neither (a hit written over may have had them); a fresh one gets no such property at all.
  if (hit.eventName !== undefined) hit.eventName = undefined;
  if (hit.value !== undefined) hit.value = undefined;
  if (hit.props !== undefined) hit.props = undefined;
  const props = c.props.get(i);
  if (props !== undefined) hit.props = props;
  if (hit.type === 'event') {
    hit.eventName = texts[fields[f + EVENT]!]!;
    const value = c.values[i]!;
    if (!Number.isNaN(value)) hit.value = value;
  }
  return hit;
}

/** Row `i`'s site id. */
export function siteIdAt(c: ChunkColumns, i: number): string {
  return c.texts[c.fields[i * FIELDS + SITE]!]!;
}

/** The place the reader worked out for row `i`'s address, if it did. */
export function placeAt(c: ChunkColumns, i: number): string | undefined {
  return c.places[c.fields[i * FIELDS + IP]!] ?? undefined;
}

/** The rows of `c` oldest first; rows of the same time in line order. */
export function timeOrder(c: ChunkColumns): Uint32Array {
  const order = new Uint32Array(c.count);
  for (let i = 0; i < order.length; i++) order[i] = i;
  const { times } = c;
  return order.sort((a, b) => times[a]! - times[b]! || a - b);
}
