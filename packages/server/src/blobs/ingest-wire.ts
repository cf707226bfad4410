import type { ErrorCode } from '@berth/protocol';
import type { JsonCheckOptions, JsonCheckResult } from './json-check.js';

/** The messages between `ingest-pool.ts` (main thread) and `ingest-thread.ts`: types only. */
export type ToThread =
  | { op: 'start'; id: number; path: string; key?: string; maxDepth: number; maxOtherBytes: number; fsync: boolean }
  | { op: 'write'; id: number; chunk: Uint8Array }
  | { op: 'end'; id: number }
  | { op: 'abort'; id: number }
  | { op: 'parse'; id: number; bytes: Uint8Array; opts: JsonCheckOptions };

/** A `BerthError` across the thread boundary. */
export interface WireError {
  code: ErrorCode;
  message: string;
  details?: unknown;
}

export type FromThread =
  | { op: 'written'; id: number; bytes: number }
  | { op: 'done'; id: number; result: JsonCheckResult }
  | { op: 'parsed'; id: number; result: JsonCheckResult }
  | { op: 'aborted'; id: number }
  | { op: 'failed'; id: number; error: WireError };
