// The ioredis client for REDIS_URL: one Redis, or with `?cluster=on` a Redis Cluster client; and the few commands
// that must reach every master of a cluster (readiness, deleting by pattern).

import { Cluster, Redis, type ClusterOptions, type Command } from 'ioredis';
import { redisClusterMode } from './cluster-url.js';

export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** The longest a command may take, waiting for a connection included, before it fails (503 to the request). */
  commandTimeout: number;
  /** Reconnections a command waits through before it fails. */
  maxRetriesPerRequest: number;
  /** Concurrent commands sent together (one Redis only: see redisClient). */
  enableAutoPipelining?: boolean;
}

/**
 * A Cluster whose every command fails after `deadlineMs`, like a single Redis' commandTimeout. ioredis applies
 * commandTimeout only once a command is written to a node: while the cluster is connecting or reconnecting, commands
 * wait in its offline queue with no limit, and a request would hang for the length of an outage instead of being
 * answered 503 (src/http/service-outage.ts knows "Command timed out"). Redirections and retries count against the
 * same deadline: the command's timer is set once.
 */
class DeadlineCluster extends Cluster {
  constructor(nodes: ConstructorParameters<typeof Cluster>[0], options: ClusterOptions, private readonly deadlineMs: number) {
    super(nodes, options);
  }

  override sendCommand(command: Command, stream?: Parameters<Cluster['sendCommand']>[1], node?: unknown): unknown {
    command.setTimeout(this.deadlineMs);
    return super.sendCommand(command, stream, node);
  }
}

/**
 * The client for `url` (`redis://` or `rediss://`, user and password in the URL). With `cluster=on` in its query,
 * the URL's host is one node of a Redis Cluster (or a managed service's configuration endpoint): the client learns
 * the others from it, follows MOVED and ASK redirections and refreshes the slot map as the cluster changes. The
 * password and TLS apply to every node. Both clients queue commands while connecting (enableOfflineQueue), within
 * the deadline above; a lost connection's 'error' is not fatal, both reconnect by themselves.
 */
export function redisClient(url: string, o: RedisClientOptions): RedisClient {
  const parsed = new URL(url);
  const cluster = redisClusterMode(url) === true;
  if (!cluster) {
    // `cluster=off` is Plumb's parameter, not ioredis' (which takes every query parameter as an option).
    parsed.searchParams.delete('cluster');
    const client = new Redis(new URL(url).searchParams.has('cluster') ? parsed.toString() : url, {
      maxRetriesPerRequest: o.maxRetriesPerRequest,
      commandTimeout: o.commandTimeout,
      enableOfflineQueue: true,
      ...(o.enableAutoPipelining ? { enableAutoPipelining: true } : {}),
    });
    client.on('error', () => undefined);
    return client;
  }
  const tls = parsed.protocol === 'rediss:';
  const client = new DeadlineCluster(
    [{ host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: parsed.port === '' ? 6379 : Number(parsed.port) }],
    {
      redisOptions: {
        ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
        ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
        ...(tls ? { tls: {} } : {}),
        maxRetriesPerRequest: o.maxRetriesPerRequest,
        commandTimeout: o.commandTimeout,
      },
      enableOfflineQueue: true,
      // Retries after a lost node, CLUSTERDOWN or TRYAGAIN are paced so that the deadline ends them ("Command timed
      // out": an outage, 503), not ioredis' limit of 16 redirections, whose "Too many Cluster redirections" would be
      // taken for a bug (500): a key of a lost master bounces between MOVED and a refused connection, two
      // redirections per retry, so 8 retries at a quarter of the deadline each outlast it.
      retryDelayOnFailover: Math.ceil(o.commandTimeout / 4),
      retryDelayOnClusterDown: Math.ceil(o.commandTimeout / 4),
      retryDelayOnTryAgain: Math.ceil(o.commandTimeout / 4),
      // Not auto-pipelining: its commands wait for the cluster's slot map outside the offline queue, with no deadline,
      // so at a start during an outage they would hang. Commands to one node still share its connection.
      enableAutoPipelining: false,
      // With TLS the URL's node is reached by its name, which its certificate carries, not by the address ioredis
      // would otherwise look up for it first (ioredis' advice for managed clusters with TLS); the others by what the
      // cluster announces for them.
      ...(tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
    },
    o.commandTimeout,
  );
  // 'node error' is each node's connection trouble; the cluster retries and redirects by itself.
  client.on('error', () => undefined);
  client.on('node error', () => undefined);
  return client;
}

/**
 * Reachable and answering: the one Redis, or a cluster that says it serves every slot and each master of its slot
 * map, so that a process is not ready while any key's master is away (its requests would fail: 503).
 */
export async function pingRedis(client: RedisClient): Promise<void> {
  // Through the client first: it fails within the deadline while a cluster is still unknown (no masters to list).
  await client.ping();
  if (!(client instanceof Cluster)) return;
  const info = String(await client.cluster('INFO'));
  if (!/^cluster_state:ok\b/m.test(info)) throw new Error('Redis Cluster does not serve every slot (cluster_state is not ok)');
  // A master that dropped its connection leaves the client's pool at once; the cluster marks it failed only after
  // its node timeout (15 s by default).
  const connected = new Map(client.nodes('master').map((node) => [`${node.options.host}:${node.options.port}`, node]));
  const masters = new Set(client.slots.map((owners) => owners?.[0]).filter((key) => key !== undefined));
  await Promise.all(
    [...masters].map((key) => {
      const node = connected.get(key);
      return node ? node.ping() : Promise.reject(new Error(`no connection to the Redis Cluster master at ${key}`));
    }),
  );
}

/** Deletes every key matching `pattern` (tests and tools: SCAN, not a request's work), on every master of a cluster. */
export async function deleteMatching(client: RedisClient, pattern: string): Promise<number> {
  let deleted = 0;
  // A cluster lists its masters once it has its slot map: a client made just now has none yet.
  if (client instanceof Cluster) await client.ping();
  for (const node of client instanceof Cluster ? client.nodes('master') : [client]) {
    let cursor = '0';
    // SCAN ends when the cursor comes back to 0; the bound only guards against a server that never says so.
    for (let round = 0; round < 1_000_000; round++) {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      // One key per DEL, through the client: on a cluster, keys of different slots cannot share a command.
      deleted += (await Promise.all(keys.map((key) => client.del(key)))).reduce((sum, n) => sum + n, 0);
      cursor = next;
      if (cursor === '0') break;
    }
  }
  return deleted;
}
