import { type Endpoint, makeEndpoint } from './endpoint.js';
import type { AnyHandler, EndpointTypes, HandlerTypes, SchemaInput, SchemaLike, UntypedHandler } from './infer.js';
import { DEFAULT_RETRY, type RetryOptions } from './transport.js';

/** Options of `createClient`. Only `baseUrl` is required. */
export interface ClientOptions {
  /** The API root, as for runpod-sdk: `http://127.0.0.1:8080/v2` (Berth) or `https://api.runpod.ai/v2` (RunPod). */
  baseUrl: string;
  /** An API key, sent as `Authorization: Bearer <key>`. Default: none. */
  apiKey?: string | undefined;
  /**
   * A job token (a short-lived credential for one job that a browser may hold), sent like a key:
   * `Authorization: Bearer <token>`. Give `apiKey` or `token`, not both. Default: none.
   */
  token?: string | undefined;
  /** Retries on network errors, 429 and 503 (see `RetryOptions` for each default). */
  retry?: RetryOptions;
  /** Headers added to every request. Default: none. */
  headers?: Record<string, string> | undefined;
  /** The `fetch` to use (a proxy agent, a test's recorder). Default: `globalThis.fetch`. */
  fetch?: typeof fetch;
}

/** A client: hands out typed endpoints. */
export interface BerthClient {
  /**
   * The calls of one endpoint. Type them with the handler's type (`endpoint<typeof handler>('story')`, with
   * `import type { handler } from './handler.js'`) or with its input schema (`endpoint('story', { input: Input })`,
   * which also checks each input before sending it).
   */
  endpoint<H extends AnyHandler = UntypedHandler>(id: string): Endpoint<HandlerTypes<H>>;
  endpoint<S extends SchemaLike, O = unknown>(
    id: string,
    options: { input: S },
  ): Endpoint<{ input: SchemaInput<S>; output: O; chunk: unknown }>;
}

/**
 * A client of a Berth (or RunPod) queue API. Runs wherever `fetch` does: Node 20+, browsers, Deno, Bun.
 *
 * @example
 * import { createClient } from '@berth/client';
 * import type { handler } from './handler.js';
 * const berth = createClient({ baseUrl: 'http://127.0.0.1:8080/v2', apiKey: process.env.BERTH_API_KEY });
 * const job = await berth.endpoint<typeof handler>('greet').runSync({ name: 'Ada' }); // input and output typed
 */
export function createClient(options: ClientOptions): BerthClient {
  if (options.apiKey && options.token) throw new TypeError('createClient: give apiKey or token, not both');
  const secret = options.apiKey ?? options.token;
  const t = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...(secret ? { authorization: `Bearer ${secret}` } : {}), ...options.headers },
    fetch: options.fetch ?? (((input, init) => globalThis.fetch(input, init)) as typeof fetch),
    retry: { ...DEFAULT_RETRY, ...options.retry },
  };
  return {
    endpoint: <T extends EndpointTypes>(id: string, o?: { input: SchemaLike }) => makeEndpoint<T>(t, id, o?.input),
  } as BerthClient;
}
