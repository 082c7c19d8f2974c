// A ClickHouse cluster for tests: N clickhouse-server processes (Debian's 18.16) on loopback, each with a config
// naming the cluster in remote_servers and its own macros, and for replicated layouts a ZooKeeper (Debian's
// package, run as a process). Everything lives in one temp dir and is stopped and removed by stop().
// Addresses: without ZooKeeper each node has a loopback address of its own (127.0.0.2, 127.0.0.3, ...) and the
// same ports, as nodes on separate hosts have: Plumb then creates tables on each node itself, at its address and
// CLICKHOUSE_URL's port. With ZooKeeper all nodes are on 127.0.0.1 with ports of their own: ClickHouse's DDL
// worker (ON CLUSTER) recognises its own entry only by an interface's address and its TCP port, and 127.0.0.2
// is no interface's address.
//
// Module: startCluster({ shards, replicas }) -> { name, nodes, url, zookeeper, versions, stop() }.
// CLI:    node scripts/clickhouse/cluster.mjs [2x1 | 1x2]   starts the layout, prints it, waits for Ctrl-C.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const CLUSTER_NAME = 'plumb_test';
/** The layouts the cluster suites run on: shards x replicas, and whether a ZooKeeper serves them. */
export const LAYOUTS = {
  '2x1': { shards: 2, replicas: 1, zookeeper: false },
  '1x2': { shards: 1, replicas: 2, zookeeper: true },
};
const START_TIMEOUT_MS = 60_000;
const SERVER = ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server'].find(existsSync) ?? 'clickhouse-server';
const ZOOKEEPER_CLASSPATH = '/etc/zookeeper/conf:/usr/share/java/zookeeper.jar';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `port` can be bound on `host` now. */
function free(host, port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/** A base port whose next `count` ports are free on every host (tried from a random start, bounded). */
async function freePorts(hosts, count) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 30000);
    let ok = true;
    for (let p = base; p < base + count && ok; p++) for (const h of hosts) if (ok && !(await free(h, p))) ok = false;
    if (ok) return base;
  }
  throw new Error(`no ${count} free ports on ${hosts.join(', ')}`);
}

const xmlEscape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

function nodeConfig(dir, node, nodes, o) {
  const base = readFileSync(join(here, 'config.xml'), 'utf8')
    .replace(/@DIR@/g, dir)
    .replace(/@HTTP_PORT@/g, String(node.httpPort))
    .replace(/@TCP_PORT@/g, String(node.tcpPort))
    .replace('<listen_host>127.0.0.1</listen_host>', `<listen_host>${node.host}</listen_host>`);
  const shards = [];
  for (let s = 1; s <= o.shards; s++) {
    const replicas = nodes
      .filter((n) => n.shard === s)
      .map((n) => `<replica><host>${n.host}</host><port>${n.tcpPort}</port></replica>`)
      .join('');
    // internal_replication: with replicated tables a Distributed insert goes to one replica, which replicates it.
    shards.push(`<shard><internal_replication>${o.zookeeper}</internal_replication>${replicas}</shard>`);
  }
  const cluster = [
    `<remote_servers><${CLUSTER_NAME}>${shards.join('')}</${CLUSTER_NAME}></remote_servers>`,
    `<macros><shard>${String(node.shard).padStart(2, '0')}</shard><replica>${xmlEscape(node.name)}</replica></macros>`,
    `<interserver_http_port>${node.interserverPort}</interserver_http_port><interserver_http_host>${node.host}</interserver_http_host>`,
    o.zookeeper
      ? `<zookeeper><node><host>127.0.0.1</host><port>${o.zookeeperPort}</port></node><session_timeout_ms>10000</session_timeout_ms></zookeeper>` +
        '<distributed_ddl><path>/clickhouse/task_queue/ddl</path></distributed_ddl>'
      : '',
  ].join('\n    ');
  return base.replace('</yandex>', `    ${cluster}\n</yandex>`);
}

// The test users.xml, but reachable from every loopback address (the nodes talk to each other on 127.0.0.x), and
// with synchronous Distributed inserts for every client, as README's production profile has: Plumb sets it on its
// own requests, and tests' own inserts (test/helpers) must be on their shard when answered too.
const usersConfig = () =>
  readFileSync(join(here, 'users.xml'), 'utf8')
    .replace('<ip>127.0.0.1</ip>', '<ip>127.0.0.0/8</ip>')
    .replace('<load_balancing>', '<insert_distributed_sync>1</insert_distributed_sync>\n            <load_balancing>');

async function answers(url) {
  try {
    const res = await fetch(url, { method: 'POST', body: 'SELECT version()', signal: AbortSignal.timeout(2000) });
    return res.ok ? (await res.text()).trim() : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether ZooKeeper serves sessions: `srvr` names its mode only then (`ruok` says imok as soon as the process
 * listens). 18.16 must not start before: a node whose first ZooKeeper sessions fail has been seen to crash
 * (a null pointer in zkutil::ZooKeeper::createImpl, the DDL worker's thread).
 */
async function zookeeperServing(port) {
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setTimeout(2000, () => socket.destroy());
    socket.on('connect', () => socket.write('srvr'));
    socket.on('data', (d) => (text += d));
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(/^Mode: /m.test(text)));
  });
}

function spawnLogged(cmd, args, logFile) {
  const out = join(logFile);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: false });
  const chunks = [];
  child.stdout.on('data', (d) => chunks.push(d));
  child.stderr.on('data', (d) => chunks.push(d));
  child.on('exit', () => writeFileSync(out, Buffer.concat(chunks)));
  return child;
}

/**
 * Starts `shards` x `replicas` nodes (and a ZooKeeper when `zookeeper`), waits until each answers and sees the
 * cluster, and returns the layout. On any failure everything started so far is stopped before the error is thrown.
 */
export async function startCluster({ shards, replicas, zookeeper }) {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-ch-cluster-'));
  const children = [];
  const count = shards * replicas;
  const hosts = Array.from({ length: count }, (_, i) => (zookeeper ? '127.0.0.1' : `127.0.0.${i + 2}`));
  // Ports of node i: base + 3i (http), + 1 (tcp), + 2 (interserver); ZooKeeper's after the last node's.
  const step = zookeeper ? 3 : 0;
  const stop = async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const deadline = Date.now() + 15_000;
    while (children.some((c) => c.exitCode === null && c.signalCode === null) && Date.now() < deadline) await sleep(100);
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // PLUMB_CLUSTER_KEEP_LOGS=1: the servers' logs stay (the data goes) for a failure to be read afterwards.
    if (process.env.PLUMB_CLUSTER_KEEP_LOGS === '1') {
      for (const node of readdirSync(dir)) rmSync(join(dir, node, 'data'), { recursive: true, force: true });
      console.error(`ClickHouse cluster logs kept in ${dir}`);
    } else {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  try {
    // http, tcp, interserver on every node's address, and ZooKeeper's client port on 127.0.0.1.
    const base = await freePorts([...new Set([...hosts, '127.0.0.1'])], 3 + step * (count - 1) + 1);
    const o = { shards, replicas, zookeeper, zookeeperPort: base + 3 + step * (count - 1) };
    if (zookeeper) {
      const zkDir = join(dir, 'zookeeper');
      mkdirSync(join(zkDir, 'data'), { recursive: true });
      writeFileSync(
        join(zkDir, 'zoo.cfg'),
        `tickTime=1000\ndataDir=${zkDir}/data\nclientPort=${o.zookeeperPort}\nclientPortAddress=127.0.0.1\n` +
          'admin.enableServer=false\nmaxClientCnxns=0\n4lw.commands.whitelist=srvr\n',
      );
      const zk = spawnLogged(
        'java',
        ['-Xmx256m', '-cp', ZOOKEEPER_CLASSPATH, '-Dzookeeper.log.dir=' + zkDir, 'org.apache.zookeeper.server.quorum.QuorumPeerMain', join(zkDir, 'zoo.cfg')],
        join(zkDir, 'stdout.log'),
      );
      children.push(zk);
      const deadline = Date.now() + START_TIMEOUT_MS;
      while (!(await zookeeperServing(o.zookeeperPort))) {
        if (zk.exitCode !== null || Date.now() > deadline) throw new Error(`ZooKeeper did not start (see ${zkDir})`);
        await sleep(200);
      }
    }
    const nodes = hosts.map((host, i) => ({
      name: `s${Math.floor(i / replicas) + 1}r${(i % replicas) + 1}`,
      host,
      shard: Math.floor(i / replicas) + 1,
      replica: (i % replicas) + 1,
      httpPort: base + step * i,
      tcpPort: base + step * i + 1,
      interserverPort: base + step * i + 2,
      url: `http://${host}:${base + step * i}`,
    }));
    for (const node of nodes) {
      const nodeDir = join(dir, node.name);
      for (const sub of ['log', 'data', 'tmp', 'user_files', 'format_schemas', 'etc']) mkdirSync(join(nodeDir, sub), { recursive: true });
      writeFileSync(join(nodeDir, 'etc', 'config.xml'), nodeConfig(nodeDir, node, nodes, o));
      writeFileSync(join(nodeDir, 'etc', 'users.xml'), usersConfig());
      node.dir = nodeDir;
      node.process = spawnLogged(SERVER, [`--config-file=${join(nodeDir, 'etc', 'config.xml')}`], join(nodeDir, 'log', 'stdout.log'));
      children.push(node.process);
    }
    const versions = {};
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (const node of nodes) {
      for (;;) {
        const version = await answers(node.url);
        if (version) {
          versions[node.name] = version;
          break;
        }
        if (node.process.exitCode !== null || Date.now() > deadline) {
          const log = join(node.dir, 'log');
          throw new Error(`ClickHouse node ${node.name} did not start (see ${log}): ${tail(join(log, 'error.log'))}`);
        }
        await sleep(200);
      }
    }
    // ZooKeeper may take a moment to serve sessions after it answers `ruok`: wait until every node has one.
    if (zookeeper) for (const node of nodes) await zookeeperSession(node, deadline);
    return {
      name: CLUSTER_NAME,
      nodes,
      /** The node Plumb connects to (any node would do). */
      url: nodes[0].url,
      zookeeper: zookeeper ? `127.0.0.1:${o.zookeeperPort}` : undefined,
      versions,
      dir,
      /** Stops one node (a replica going down) and returns a function that starts it again. */
      async stopNode(node) {
        node.process.kill('SIGKILL');
        while (node.process.exitCode === null && node.process.signalCode === null) await sleep(50);
        return async () => {
          node.process = spawnLogged(SERVER, [`--config-file=${join(node.dir, 'etc', 'config.xml')}`], join(node.dir, 'log', 'stdout.log'));
          children.push(node.process);
          const until = Date.now() + START_TIMEOUT_MS;
          while (!(await answers(node.url))) {
            if (node.process.exitCode !== null || Date.now() > until) throw new Error(`ClickHouse node ${node.name} did not restart`);
            await sleep(200);
          }
        };
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Waits until `node` reads system.zookeeper, i.e. holds a ZooKeeper session. */
async function zookeeperSession(node, deadline) {
  for (;;) {
    try {
      const res = await fetch(node.url, { method: 'POST', body: "SELECT count() FROM system.zookeeper WHERE path = '/'", signal: AbortSignal.timeout(5000) });
      if (res.ok) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`ClickHouse node ${node.name} has no ZooKeeper session (see ${node.dir}/log)`);
    await sleep(200);
  }
}

function tail(file, lines = 5) {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** The last `lines` lines of each node's error log, for a failed run to show what the servers said. */
export function errorLogs(cluster, lines = 20) {
  return cluster.nodes.map((n) => `--- ${n.name} error.log (last ${lines} lines):\n${tail(join(n.dir, 'log', 'error.log'), lines)}`).join('\n');
}

/** One line per node: the layout as an operator reads it. */
export function describe(cluster) {
  const lines = cluster.nodes.map(
    (n) => `  ${n.name}: shard ${n.shard} replica ${n.replica} at ${n.url} (tcp ${n.tcpPort}), ClickHouse ${cluster.versions[n.name]}`,
  );
  return [`cluster ${cluster.name}${cluster.zookeeper ? `, ZooKeeper at ${cluster.zookeeper}` : ', no ZooKeeper'}:`, ...lines].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const layout = LAYOUTS[process.argv[2] ?? '2x1'];
  if (!layout) {
    console.error(`usage: node scripts/clickhouse/cluster.mjs [${Object.keys(LAYOUTS).join(' | ')}]`);
    process.exit(2);
  }
  const cluster = await startCluster(layout);
  console.log(describe(cluster));
  console.log(`CLICKHOUSE_URL=${cluster.url} CLICKHOUSE_CLUSTER=${cluster.name}   (Ctrl-C stops the cluster)`);
  const end = async () => {
    await cluster.stop();
    process.exit(0);
  };
  process.on('SIGINT', end);
  process.on('SIGTERM', end);
}
