// A small client for the running server's /admin API, used by every CLI command.

export class AdminClientError extends Error {}

export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly adminToken: string | undefined,
    /** What to say when there is no admin credential, and what to add when /admin refuses the one given. */
    private readonly messages: { noAdmin?: string; refusedAdmin?: string } = {},
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

  /** A request with a text body of any type (imports). */
  requestText<T>(path: string, body: string, headers: Record<string, string>): Promise<T> {
    if (!this.adminToken) throw new AdminClientError(this.noAdmin());
    return this.send<T>('POST', path, this.adminToken, body, headers);
  }

  /** A POST whose body is streamed (large imports), never held whole. */
  requestStream<T>(path: string, body: AsyncIterable<Uint8Array>, headers: Record<string, string>): Promise<T> {
    if (!this.adminToken) throw new AdminClientError(this.noAdmin());
    return this.send<T>('POST', path, this.adminToken, body, headers);
  }

  /** A JSON request to /v1 with an API token. */
  api<T>(method: string, path: string, token: string, body?: unknown): Promise<T> {
    return this.send<T>(method, path, token, body === undefined ? undefined : JSON.stringify(body), {
      'content-type': 'application/json',
    });
  }

  private noAdmin(): string {
    return this.messages.noAdmin ?? 'PLUMB_ADMIN_TOKEN is not set: export the admin token the server was started with';
  }

  private async send<T>(
    method: string,
    path: string,
    token: string,
    body: string | AsyncIterable<Uint8Array> | undefined,
    headers: Record<string, string>,
  ): Promise<T> {
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body === undefined ? {} : headers) },
        // A streamed body needs half-duplex (Node's fetch sends it as it is read).
        ...(body === undefined ? {} : typeof body === 'string' ? { body } : { body: body as unknown as NonNullable<RequestInit['body']>, duplex: 'half' }),
      } as RequestInit);
    } catch (err) {
      throw new AdminClientError(`cannot reach Plumb at ${this.baseUrl} (${(err as Error).message}); is it running? (PLUMB_URL)`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      throw new AdminClientError(`unexpected answer from ${this.baseUrl} (HTTP ${res.status})`);
    }
    if (!res.ok) {
      const message = describeError(parsed);
      const refused = token === this.adminToken && (res.status === 401 || /admin API is disabled/.test(message));
      throw new AdminClientError(`HTTP ${res.status}: ${message}${refused ? (this.messages.refusedAdmin ?? '') : ''}`);
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
