// PLUMB_TRUST_PROXY as Fastify's trustProxy, and the client address read with it outside Fastify (the collector's
// fast lane): one reading of X-Forwarded-For for every request.

import type { IncomingMessage } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';

/** Fastify's trustProxy as Plumb gives it: no proxy, or a function telling which addresses are proxies. */
export type TrustProxy = false | ((address: string, hop: number) => boolean);

/**
 * The setting as Fastify takes it, compiled once: Fastify calls a function as it is, and the lane calls the same
 * one. A hop count becomes a function too: Fastify 5 trusts no proxy for a bare number (it cannot tell that the
 * nearest peer is a proxy), which left every visitor with the proxy's address, while PLUMB_TRUST_PROXY documents a
 * count of proxies. The count trusts that many nearest addresses, as `true` trusts all: either is for a server that
 * only its proxies can reach.
 */
export function trustProxyOption(setting: boolean | number | string): TrustProxy {
  if (setting === false) return false;
  if (setting === true) return () => true;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return proxyAddr.compile(setting.split(',').map((entry) => entry.trim()));
}

/** The client's address as Fastify's `request.ip` gives it under `trust` (fastify/lib/request.js). */
export function clientAddress(trust: TrustProxy): (req: IncomingMessage) => string {
  if (trust === false) return (req) => req.socket.remoteAddress ?? '';
  return (req) => proxyAddr.all(req, trust).at(-1) ?? '';
}
