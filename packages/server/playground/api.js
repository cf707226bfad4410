// @ts-check
// The queue API as the page uses it: the API key (URL fragment or key field, kept in sessionStorage), JSON calls
// that turn the API's {error, code} into ApiError, and the stream route (server-sent events read with fetch).

const KEY_ITEM = 'berth.apiKey';

/** An API answer that was not 2xx, or a network failure (status 0). */
export class ApiError extends Error {
  /**
   * @param {number} status the HTTP status (0: the request did not get an answer)
   * @param {string} code the API's stable error code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
  /** "401 unauthorized: no API key" */
  get text() {
    return this.status ? `${this.status} ${this.code}: ${this.message}` : this.message;
  }
}

/** Reads `#key=...` once, stores it, and removes the fragment from the address bar. */
export function takeKeyFromFragment() {
  // Parsed by hand: URLSearchParams would turn a "+" in the key into a space.
  const parts = location.hash.slice(1).split('&');
  const at = parts.findIndex((p) => p.startsWith('key='));
  if (at < 0) return;
  let key = /** @type {string} */ (parts[at]).slice(4);
  try {
    key = decodeURIComponent(key);
  } catch {
    // not percent-encoded: use it as it is
  }
  parts.splice(at, 1);
  const rest = parts.filter(Boolean).join('&');
  history.replaceState(null, '', location.pathname + location.search + (rest ? `#${rest}` : ''));
  if (key) setKey(key);
}

/** @returns {string} the tab's API key ('' for none) */
export const getKey = () => sessionStorage.getItem(KEY_ITEM) ?? '';
/** @param {string} key the tab's API key ('' forgets it) */
export function setKey(key) {
  if (key) sessionStorage.setItem(KEY_ITEM, key);
  else sessionStorage.removeItem(KEY_ITEM);
}

/** @param {Record<string, string>} extra */
function headers(extra) {
  const h = new Headers(extra);
  const key = getKey();
  if (key) h.set('Authorization', `Bearer ${key}`);
  return h;
}

/**
 * @typedef {object} ApiOptions
 * @property {string} [method] default GET
 * @property {unknown} [body] sent as JSON
 * @property {AbortSignal | undefined} [signal]
 */

/**
 * Calls a route and returns its JSON; throws ApiError with the API's code and message otherwise.
 *
 * @param {string} path
 * @param {ApiOptions} [options]
 * @returns {Promise<any>} the answer's JSON (undefined for an empty body): the caller knows the route's shape
 */
export async function api(path, { method = 'GET', body, signal } = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      body: body === undefined ? null : JSON.stringify(body),
      signal: signal ?? null,
    });
  } catch (err) {
    if (isAbort(err)) throw err;
    throw new ApiError(0, 'network_error', `Network error: ${messageOf(err)} (is the server running?)`);
  }
  const text = await res.text();
  /** @type {any} */
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const message =
      json && typeof json.error === 'string'
        ? json.error
        : (json?.error?.message ?? (text.slice(0, 200) || res.statusText));
    const code = json?.code ?? json?.error?.code ?? 'http_error';
    throw new ApiError(res.status, code, message);
  }
  return json;
}

/**
 * The path of a job route: `/v2/<target>/<op>[/<jobId>]`.
 *
 * @param {string} target
 * @param {string} op
 * @param {string} [jobId]
 * @returns {string}
 */
export const route = (target, op, jobId) =>
  `/v2/${encodeURIComponent(target)}/${op}${jobId ? `/${encodeURIComponent(jobId)}` : ''}`;

/**
 * Reads `/stream/<jobId>` as server-sent events, calling `onChunk(output)` per chunk; resolves with the terminal job
 * object of the `done` event. Falls back to the JSON long-poll loop when the answer is not an event stream.
 *
 * @param {string} target
 * @param {string} jobId
 * @param {(output: unknown) => void} onChunk
 * @param {AbortSignal} [signal]
 * @returns {Promise<any>} the terminal job object, or undefined when the stream ended without one
 */
export async function followStream(target, jobId, onChunk, signal) {
  const res = await fetch(route(target, 'stream', jobId), {
    headers: headers({ Accept: 'text/event-stream' }),
    signal: signal ?? null,
  });
  if (!res.ok) {
    const body = await res.json().catch(() => ({}));
    throw new ApiError(res.status, body.code ?? 'http_error', body.error ?? res.statusText);
  }
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    let reply = await res.json();
    for (;;) {
      for (const part of reply.stream ?? []) onChunk(part.output);
      if (TERMINAL.has(reply.status)) return reply;
      reply = await api(route(target, 'stream', jobId), { signal });
    }
  }
  if (!res.body) return undefined;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return undefined;
    buffer += value;
    let end;
    while ((end = buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end).replace(/^\r?\n\r?\n/, '');
      const event = parseEvent(block);
      if (!event) continue;
      if (event.type === 'done') return event.data;
      if (event.type === 'error')
        throw new ApiError(404, event.data?.code ?? 'stream_error', event.data?.error ?? 'stream ended');
      if (event.data && 'output' in event.data) onChunk(event.data.output);
    }
  }
}

/**
 * One server-sent event block: its type and JSON data, or undefined (a comment, no data, or data not JSON).
 *
 * @param {string} block
 * @returns {{ type: string, data: any } | undefined}
 */
function parseEvent(block) {
  let type = 'message';
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line.startsWith(':')) continue;
    const i = line.indexOf(':');
    const field = i < 0 ? line : line.slice(0, i);
    const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  try {
    return { type, data: JSON.parse(data.join('\n')) };
  } catch {
    return undefined;
  }
}

/** @type {ReadonlySet<unknown>} job states after which nothing changes */
export const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);

/**
 * Whether `err` is the rejection of an aborted fetch or wait (a DOMException named AbortError).
 *
 * @param {unknown} err
 */
export const isAbort = (err) => err instanceof Error && err.name === 'AbortError';

/**
 * The message of a thrown value: an Error's message, anything else as text.
 *
 * @param {unknown} err
 * @returns {string}
 */
export const messageOf = (err) => (err instanceof Error ? err.message : String(err));

/**
 * A copy without `s3Config` (the page never shows it).
 *
 * @param {any} value
 * @returns {any}
 */
export function withoutSecrets(value) {
  if (!value || typeof value !== 'object') return value;
  const { s3Config: _s3, ...rest } = value;
  return rest;
}
