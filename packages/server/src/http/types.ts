import type { AbortLike } from '../core/abort.js';

/**
 * The socket-free core of the HTTP API: `handle(ApiRequest) -> ApiResponse`. Tests call it directly; the node
 * adapter maps `node:http` onto it.
 */
export interface ApiRequest {
  method: string;
  /** Path without the query string, e.g. `/v2/echo/run`. */
  path: string;
  query: URLSearchParams;
  /** The query string as received, without `?` (what a proxied request forwards unchanged). */
  rawQuery?: string;
  /** Header names in lower case. */
  headers: Record<string, string | undefined>;
  /** The raw body, read lazily so size limits are enforced while reading. */
  body?: AsyncIterable<Uint8Array> | Uint8Array | string;
  /**
   * The whole body when it has already been received (a small request arrives with its headers), held in the
   * in-flight budget as `body`'s chunks are (throws 503 `overloaded` when it does not fit); undefined when it has
   * not, or once `body` is being read: then read `body`. Saves a proxy the asynchronous read of small bodies.
   */
  arrived?: () => Uint8Array | undefined;
  /** Aborts when the client goes away (an `AbortSignal`, or the adapter's cheaper `ClientGone`). */
  signal?: AbortLike;
  /**
   * A reader that no longer holds `bytes` of the body in memory (streamed to a blob file) gives them back to the
   * server's in-flight budget, which otherwise holds them until the answer is sent.
   */
  release?: (bytes: number) => void;
}

export type ApiResponse =
  | { status: number; headers?: Record<string, string>; json: unknown }
  /** A server-sent event stream: each string is written as it is produced. */
  | { status: number; headers?: Record<string, string>; events: AsyncIterable<string> }
  /** Raw bytes (served output files); `headers` carries the Content-Type. */
  | { status: number; headers?: Record<string, string>; bytes: Uint8Array }
  /** Raw bytes produced piece by piece (downloads): `length` bytes in all (the Content-Length). */
  | { status: number; headers?: Record<string, string>; stream: AsyncIterable<Uint8Array>; length: number }
  /**
   * Bytes passed through as they come (a load-balancing worker's answer): headers sent at once, each piece written
   * when it arrives, framed by the given Content-Length or chunked.
   */
  | { status: number; headers?: Record<string, string>; piped: AsyncIterable<Uint8Array>; setCookie?: string[] };
