// A small client for the running server's /admin API, used by every CLI command.

import { request as httpRequest, type ClientRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export class AdminClientError extends Error {}

export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly adminToken: string | undefined,
    /**
     * What to say when there is no admin credential, what to add when /admin refuses the one given, and what
     * after the reason when nothing answers at the address.
     */
    private readonly messages: { noAdmin?: string; refusedAdmin?: string; unreachable?: string } = {},
  ) {}

  get hasAdmin(): boolean {
    return this.adminToken !== undefined;
  }

  /** A JSON request to /admin. */
  request<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (!this.adminToken) throw new AdminClientError(this.noAdmin());
    return this.send<T>(method, path, this.adminToken, body === undefined ? undefined : JSON.stringify(body), {
      'content-type': 'application/json',
    });
  }

  /**
   * A POST with a body of any type held whole (an import's chunk), sent with node:http as it is: fetch copied a
   * chunk's bytes twice more before sending them (about 3 µs a line, CPU the CLI takes from the server beside it).
   */
  requestText<T>(path: string, body: string | Uint8Array, headers: Record<string, string>): Promise<T> {
    return this.post<T>(path, headers, (req) => req.end(body));
  }

  /**
   * A POST whose body is streamed (large imports), never held whole. Sent with node:http rather than fetch, which
   * gives up when no answer has come 5 minutes after the body: an import answers once it has read the whole
   * export, which for a large one is longer.
   */
  requestStream<T>(path: string, body: AsyncIterable<Uint8Array>, headers: Record<string, string>): Promise<T> {
    return this.post<T>(path, headers, (req, failed) =>
      pipeline(Readable.from(body), req).catch((err: Error) => failed(err)),
    );
  }

  /** A POST to /admin with node:http; `send` writes the body (`failed` reports a failure while it does). */
  private post<T>(path: string, headers: Record<string, string>, send: (req: ClientRequest, failed: (err: Error) => void) => void): Promise<T> {
    if (!this.adminToken) throw new AdminClientError(this.noAdmin());
    const token = this.adminToken;
    const url = new URL(path, this.baseUrl);
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<T>((resolve, reject) => {
      const unreachable = (err: Error) => reject(new AdminClientError(this.unreachable(err)));
      const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', unreachable);
        res.on('end', () => {
          try {
            resolve(this.answer<T>(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), token));
          } catch (err) {
            reject(err);
          }
        });
      });
      // A body that fails to be read (AdminClientError) fails the request with its own reason.
      req.on('error', (err) => (err instanceof AdminClientError ? reject(err) : unreachable(err)));
      send(req, (err) => (err instanceof AdminClientError ? reject(err) : unreachable(err)));
    });
  }

  /** A JSON request to /v1 with an API token. */
  api<T>(method: string, path: string, token: string, body?: unknown): Promise<T> {
    return this.send<T>(method, path, token, body === undefined ? undefined : JSON.stringify(body), {
      'content-type': 'application/json',
    });
  }

  private unreachable(err: Error): string {
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND) is its cause.
    const reason = (err.cause as Error | undefined)?.message ?? err.message;
    return `cannot reach Plumb at ${this.baseUrl} (${reason}); ${this.messages.unreachable ?? 'is it running? (PLUMB_URL)'}`;
  }

  private noAdmin(): string {
    return this.messages.noAdmin ?? 'PLUMB_ADMIN_TOKEN is not set: export the admin token the server was started with';
  }

  private async send<T>(
    method: string,
    path: string,
    token: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<T> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : headers) },
        ...(body === undefined ? {} : { body }),
      });
    } catch (err) {
      throw new AdminClientError(this.unreachable(err as Error));
    }
    return this.answer<T>(res.status, await res.text(), token);
  }

  /** The parsed answer of a 2xx, or the error an other status says. */
  private answer<T>(status: number, text: string, token: string): T {
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new AdminClientError(`unexpected answer from ${this.baseUrl} (HTTP ${status})`);
    }
    if (status < 200 || status > 299) {
      const message = describeError(parsed);
      const refused = token === this.adminToken && (status === 401 || /admin API is disabled/.test(message));
      throw new AdminClientError(`HTTP ${status}: ${message}${refused ? (this.messages.refusedAdmin ?? '') : ''}`);
    }
    return parsed as T;
  }
}

function describeError(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as { error?: unknown; errors?: Record<string, string[]> };
    if (typeof b.error === 'string') return b.error;
    if (b.errors) return Object.entries(b.errors).map(([field, msgs]) => `${field} ${msgs.join(', ')}`).join('; ');
  }
  return JSON.stringify(body);
}
