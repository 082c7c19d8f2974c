// Answers sent before their request's body has all arrived (a 413 for a body over the limit, a refusal before an
// upload is read, an import refused mid-upload): the rest of the body is read and dropped, up to a bound, so that a
// client still sending reads the answer instead of a reset connection (EPIPE). Closing at once, as Fastify asks
// for with `Connection: close`, makes the kernel reset a connection with unread bytes, answer and all.

import type { FastifyInstance } from 'fastify';

/** Bytes of an answered request's body read and dropped before its connection is closed. */
export const MAX_DRAINED_BYTES = 64 * 1024 * 1024;
/** How long they may take to arrive. */
export const MAX_DRAIN_MS = 5_000;

export function drainEarlyAnswers(app: FastifyInstance): void {
  app.addHook('onSend', async (request) => {
    const req = request.raw;
    // Injected requests (tests) have no `complete`; a finished body needs nothing.
    if (req.complete !== false) return;
    const socket = req.socket;
    // A request destroyed on the way (its connection with it) has nothing left to read.
    if (!socket || socket.destroyed) return;
    const close = () => socket.destroy();
    const timer = setTimeout(close, MAX_DRAIN_MS).unref();
    let drained = 0;
    const count = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > MAX_DRAINED_BYTES) close();
    };
    // An answer with `Connection: close` (Fastify's, or the client's wish) ends with Node's destroySoon(). Until the
    // body has come, on this socket it only ends the server's side, after the answer: the client reads it, and the
    // body goes on arriving, to be dropped. Kept alive instead, the next request waits for the body.
    let closing = false;
    socket.destroySoon = () => {
      closing = true;
      if (socket.writable) socket.end();
    };
    req.on('data', count);
    req.once('end', () => {
      clearTimeout(timer);
      req.off('data', count);
      // Net.Socket's own destroySoon again: closes once the answer is written, as Node would have.
      Reflect.deleteProperty(socket, 'destroySoon');
      if (closing) socket.destroySoon();
    });
    socket.once('close', () => clearTimeout(timer));
    // A body a handler stopped reading (an upload refused part-way) is paused: it flows again, to nowhere.
    req.resume();
  });
}
