// A service Plumb depends on (PostgreSQL, Redis, ClickHouse) being unreachable or overloaded, told apart from a bug:
// a request that meets one is answered 503 with Retry-After, "come back shortly", never 500; the process keeps running.

import { RetryLater } from '../domain/errors.js';

/** Seconds a client is asked to wait: services restart in seconds, and clients should not hammer one that does. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

export class ServiceUnavailable extends RetryLater {
  constructor() {
    super('A storage service Plumb depends on is unavailable; retry shortly', OUTAGE_RETRY_AFTER_SECONDS);
  }
}

/** Node's and undici's codes for a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'ENOTFOUND', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CLOSED',
]);

/** PostgreSQL's SQLSTATEs of a server going away: class 08 (connection exception), and shutdown or start-up. */
const PG_STATES = /^(08...|57P01|57P02|57P03)$/;

/**
 * What the clients say when their service is gone, for errors that carry no code (pg's lost connection, ioredis'
 * retries and timeouts, and errors that crossed from the ingest thread as text).
 */
const MESSAGES = [
  /Connection terminated/i,
  /terminating connection due to administrator command/i,
  /Connection is closed/i,
  /Command timed out/i,
  /Reached the max retries per request limit/i,
  /Stream isn't writeable/i,
  /socket hang up/i,
  /the database system is (starting up|shutting down|in recovery mode)/i,
  /timeout exceeded when trying to connect/i,
  // @clickhouse/client's request timeout (30 s): a server that took the request and never answered (overloaded, or a
  // cluster's ON CLUSTER statement waiting on its Keeper). The statements it stops are safe to send again.
  /^Timeout error\.$/,
  // A ClickHouse deletion still running when Plumb stops waiting for it (mutationsStillRunning): it goes on.
  /: ClickHouse mutations still running after \d+ ms$/,
  /\bECONNREFUSED\b|\bECONNRESET\b/,
  // A Redis Cluster losing a master: what ioredis says when redirections or the cluster's state outrun its retries.
  /Too many Cluster redirections/,
  /^CLUSTERDOWN\b/,
  /Cluster isn't ready/,
];

/**
 * ClickHouse's error codes (its ErrorCodes; 18.16 gives only the number) for a server or cluster that is overloaded,
 * partly unreachable or waiting on its Keeper, where the same request can succeed shortly: TIMEOUT_EXCEEDED (159,
 * also an ON CLUSTER statement outwaiting distributed_ddl_task_timeout), CANNOT_ALLOCATE_MEMORY (173),
 * TOO_MANY_SIMULTANEOUS_QUERIES (202), SOCKET_TIMEOUT (209), NETWORK_ERROR (210), NO_ZOOKEEPER (225),
 * TABLE_IS_READ_ONLY (242, a replica without its Keeper), TOO_MANY_PARTS (252), ALL_CONNECTION_TRIES_FAILED (279, a
 * shard away), REPLICA_IS_NOT_IN_QUORUM (289), UNKNOWN_STATUS_OF_INSERT (319), ALL_REPLICAS_ARE_STALE (369),
 * ALL_REPLICAS_LOST (415), SERVER_OVERLOADED (745), KEEPER_EXCEPTION (999).
 */
const CLICKHOUSE_TRANSIENT = new Set([159, 173, 202, 209, 210, 225, 242, 252, 279, 289, 319, 369, 415, 745, 999]);
/** MEMORY_LIMIT_EXCEEDED: transient when the server as a whole is out of memory, not when one query is too big. */
const CLICKHOUSE_MEMORY = 241;

/**
 * Whether a ClickHouse error is transient: by its `code` (the HTTP client's ClickHouseError: a number of at most four
 * digits, where PostgreSQL's SQLSTATEs have five characters), or by any `Code: N` in its message (18.16, chdb, and
 * errors a cluster node wraps around another node's), read in its first 4,000 characters.
 */
function clickHouseTransient(code: string, message: string): boolean {
  const codes = /^\d{1,4}$/.test(code) ? [Number(code)] : [];
  for (const m of message.slice(0, 4000).matchAll(/\bCode: (\d{1,4})[.,]/g)) codes.push(Number(m[1]));
  return codes.some((c) => CLICKHOUSE_TRANSIENT.has(c) || (c === CLICKHOUSE_MEMORY && message.includes('(total)')));
}

/** Whether `err` (or an error it was caused by, a few levels down) is a lost or refused service connection. */
export function isServiceOutage(err: unknown): boolean {
  let e = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown } | undefined;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (NETWORK_CODES.has(code) || PG_STATES.test(code)) return true;
    if (e.name === 'MaxRetriesPerRequestError') return true;
    const message = typeof e.message === 'string' ? e.message : '';
    if (MESSAGES.some((m) => m.test(message))) return true;
    if (clickHouseTransient(code, message)) return true;
    // An AggregateError (Node's connect to several addresses) holds the real ones.
    if (Array.isArray(e.errors) && e.errors.length > 0) return e.errors.slice(0, 5).some((x) => isServiceOutage(x));
    e = e.cause as typeof e;
  }
  return false;
}
