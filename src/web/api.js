// Talks to /v1 and the dashboard's JSON routes with the page's session: the anti-CSRF header on every call, a
// few calls in flight at a time, and waits (as Retry-After says) when the server answers 429 or 503. A call whose
// answer is no longer wanted (its signal aborted: the viewer chose another range) leaves the queue unsent.

const csrf = document.querySelector('meta[name="plumb-csrf"]')?.getAttribute('content') || '';
// An embedded share page gets no cookies inside another site's frame: it sends its share session itself.
const shareSession = document.querySelector('meta[name="plumb-share-session"]')?.getAttribute('content') || '';
const MAX_IN_FLIGHT = 4;
const MAX_RETRIES = 5;

let inFlight = 0;
const queue = [];

function acquire(signal) {
  if (inFlight < MAX_IN_FLIGHT) {
    inFlight++;
    return Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const take = () => {
      signal?.removeEventListener('abort', drop);
      resolve();
    };
    // Dropped from the queue, or a new range's calls would wait behind every call of the one before.
    const drop = () => {
      const at = queue.indexOf(take);
      if (at !== -1) queue.splice(at, 1);
      reject(signal.reason);
    };
    signal?.addEventListener('abort', drop, { once: true });
    queue.push(take);
  });
}

function release() {
  const next = queue.shift();
  if (next) next();
  else inFlight--;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class ApiError extends Error {
  constructor(status, body) {
    super(describe(status, body));
    this.status = status;
    this.body = body;
  }
}

function describe(status, body) {
  if (body && typeof body === 'object') {
    if (typeof body.error === 'string') return body.error;
    if (body.error && typeof body.error.message === 'string') return body.error.message;
    if (typeof body.message === 'string') return body.message;
    if (body.errors && typeof body.errors === 'object') {
      return Object.entries(body.errors)
        .map(([f, messages]) => `${f.replace(/_/g, ' ')} ${[].concat(messages).join(', ')}`)
        .join('; ');
    }
  }
  return `The server answered ${status}`;
}

/** Called with the 401 of an ended session (the page sends the browser to log in again). */
let onUnauthenticated = () => {};
export function whenLoggedOut(handler) {
  onUnauthenticated = handler;
}

/** `signal`: aborting it drops the call (queued or in flight) and rejects with the signal's reason. */
export async function api(method, path, body, { signal } = {}) {
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    await acquire(signal);
    let res;
    try {
      res = await fetch(path, {
        method,
        credentials: 'same-origin',
        headers: {
          accept: 'application/json',
          'x-plumb-csrf': csrf,
          ...(shareSession ? { 'x-plumb-share-session': shareSession } : {}),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } finally {
      release();
    }
    if ((res.status === 429 || res.status === 503) && attempt < MAX_RETRIES) {
      const seconds = Math.min(30, Math.max(1, Number(res.headers.get('retry-after')) || 1));
      await sleep(seconds * 1000 + Math.random() * 250);
      continue;
    }
    return answerOf(res);
  }
}

/** A response's JSON (null when there is none), or an ApiError; a 401 also tells the page the login ended. */
async function answerOf(res) {
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (res.status === 401) onUnauthenticated();
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

/**
 * Sends a file as the request body (an export to import): streamed by the browser, never read into the page; the
 * answer's JSON, or an ApiError as api() throws.
 */
export async function upload(path, file, contentType) {
  const res = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { accept: 'application/json', 'x-plumb-csrf': csrf, 'content-type': contentType },
    body: file,
  });
  return answerOf(res);
}

/** Every item of a /v1 list, page by page. */
export async function listAll(path) {
  const items = [];
  let after;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api('GET', `${path}${sep}limit=100${after ? `&starting_after=${encodeURIComponent(after)}` : ''}`);
    items.push(...page.data);
    if (!page.has_more || page.data.length === 0) return items;
    after = page.data[page.data.length - 1].id;
  }
}

export const query = (params) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
