// A TCP proxy in front of a real service that a test can cut as an outage looks to Plumb (every connection through
// it reset, new ones refused: the port closed) and restore (the same port forwarding again).

import { connect, createServer, type Server, type Socket } from 'node:net';

export interface CuttableProxy {
  readonly port: number;
  /** Resets every connection through the proxy and stops listening: connecting is refused, as to a stopped server. */
  cut(): Promise<void>;
  /** Listens on the same port again. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function cuttableProxy(targetHost: string, targetPort: number): Promise<CuttableProxy> {
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
      server.once('error', reject).listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  const port = await listen(0);
  const stop = () => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy();
    sockets.clear();
    server.close(() => resolve());
  });
  return {
    port,
    cut: stop,
    async restore() {
      server = createServer(forward);
      await listen(port);
    },
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}

/** A proxy in front of the service `url` names: its host (on a test cluster, another loopback address) and port. */
export function proxyFor(url: string, defaultPort: number): Promise<CuttableProxy> {
  const u = new URL(url);
  return cuttableProxy(u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1', Number(u.port || defaultPort));
}

/** `url` with its host and port replaced by the proxy's. */
export function through(url: string, proxy: CuttableProxy): string {
  const u = new URL(url);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
}
