// A TCP proxy in front of a real service that a test can cut as an outage looks to Plumb (every connection through
// it reset, new ones refused: the port closed) and restore (the same port forwarding again).

import { connect, createServer, type Server, type Socket } from 'node:net';

export interface CuttableProxy {
  /** The loopback address it listens on: 127.0.0.1, or one of its own (`at`). */
  readonly host: string;
  readonly port: number;
  /** Resets every connection through the proxy and stops listening: connecting is refused, as to a stopped server. */
  cut(): Promise<void>;
  /** Listens on the same port again. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** `at`: listen there (a loopback address and port) instead of on a free port of 127.0.0.1. */
export async function cuttableProxy(targetHost: string, targetPort: number, at?: { host: string; port: number }): Promise<CuttableProxy> {
  const host = at?.host ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  const forward = (client: Socket) => {
    const upstream = connect(targetPort, targetHost);
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) s.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  };
  let server: Server = createServer(forward);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once('error', reject).listen(port, host, () => resolve((server.address() as { port: number }).port));
    });
  const port = await listen(at?.port ?? 0);
  const stop = () => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    server.close(() => resolve());
  });
  return {
    host,
    port,
    cut: stop,
    async restore() {
      server = createServer(forward);
      await listen(port);
    },
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

let ownAddresses = 0;

/**
 * A proxy in front of the service `url` names: its host (on a test cluster, another loopback address) and port.
 * `samePort`: on a loopback address of its own with the service's port, for a client that derives other servers'
 * addresses from it (Plumb on a ClickHouse cluster without ZooKeeper reaches every node at CLICKHOUSE_URL's port).
 */
export function proxyFor(url: string, defaultPort: number, { samePort = false }: { samePort?: boolean } = {}): Promise<CuttableProxy> {
  const u = new URL(url);
  const port = Number(u.port || defaultPort);
  // 127.77.x.y: apart from the test cluster's 127.0.0.x, and from other test processes' (their pids differ).
  const n = (process.pid * 16 + ownAddresses++) % (254 * 256);
  const at = samePort ? { host: `127.77.${Math.floor(n / 254)}.${(n % 254) + 1}`, port } : undefined;
  return cuttableProxy(u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', port, at);
}

/** `url` with its host and port replaced by the proxy's. */
export function through(url: string, proxy: CuttableProxy): string {
  const u = new URL(url);
  u.hostname = proxy.host;
  u.port = String(proxy.port);
  return u.toString();
}
