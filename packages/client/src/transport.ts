import { BerthConnectionError, errorFrom } from './errors.js';

/** How calls are retried. Every field has a default; `createClient({ retry: { retries: 0 } })` turns retries off. */
export interface RetryOptions {
  /** Retries after the first try, on network errors, 429 and 503. Default `4`. */
  retries?: number;
  /** First backoff, ms; doubled each retry, with jitter (a random 50-100 % of it). Default `250`. */
  minDelayMs?: number;
  /** Longest backoff between two tries, ms. Default `8000`. */
  maxDelayMs?: number;
  /** Longest `Retry-After` honoured, ms: a longer one fails the call with the 429/503 instead of waiting. Default `60000`. */
  maxRetryAfterMs?: number;
}

/** What every call needs: the base URL, the headers, a `fetch`, the retry policy. */
export interface Transport {
  baseUrl: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
  retry: Required<RetryOptions>;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /**
   * Whether a network error may be retried: only when resending cannot do the work twice (reads, cancel, submits
   * with an `Idempotency-Key`). 429 and 503 are always retried: the server did nothing. Default `true`.
   */
  resend?: boolean;
}

export const DEFAULT_RETRY: Required<RetryOptions> = {
  retries: 4,
  minDelayMs: 250,
  maxDelayMs: 8000,
  maxRetryAfterMs: 60_000,
};

/**
 * One API call with retries: network errors (when `resend`), 429 and 503, waiting `Retry-After` when the answer
 * has one, else an exponential backoff. Answers the 2xx response; throws `BerthApiError` for an error answer,
 * `BerthConnectionError` when no try got an answer, the signal's reason when it aborts.
 */
export async function call(t: Transport, path: string, o: CallOptions = {}): Promise<Response> {
  const init: RequestInit = {
    method: o.method ?? (o.body === undefined ? 'GET' : 'POST'),
    headers: { ...t.headers, ...(o.body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers },
  };
  if (o.body !== undefined) init.body = JSON.stringify(o.body);
  if (o.signal) init.signal = o.signal;
  for (let attempt = 0; ; attempt++) {
    const last = attempt >= t.retry.retries;
    let res: Response;
    try {
      res = await t.fetch(t.baseUrl + path, init);
    } catch (e) {
      o.signal?.throwIfAborted();
      if (last || o.resend === false)
        throw new BerthConnectionError(`${init.method} ${path}: ${(e as Error)?.message ?? e}`, { cause: e });
      await sleep(backoff(t.retry, attempt), o.signal);
      continue;
    }
    if (res.ok) return res;
    const after = retryAfterMs(res.headers.get('retry-after'));
    if (last || (res.status !== 429 && res.status !== 503) || (after ?? 0) > t.retry.maxRetryAfterMs)
      throw await errorFrom(res);
    await res.body?.cancel().catch(() => {});
    await sleep(after ?? backoff(t.retry, attempt), o.signal);
  }
}

/** `call` and its JSON body. */
export async function callJson<T>(t: Transport, path: string, o?: CallOptions): Promise<T> {
  return (await (await call(t, path, o)).json()) as T;
}

export function backoff(r: Required<RetryOptions>, attempt: number): number {
  return Math.min(r.maxDelayMs, r.minDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2);
}

/** `Retry-After` (seconds, or an HTTP date) in ms; undefined when absent or unreadable. */
function retryAfterMs(v: string | null): number | undefined {
  if (!v) return undefined;
  const s = Number(v);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const done = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', done);
      resolve();
    }, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
