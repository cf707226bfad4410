import { BerthError, ENDPOINT_ID_RE, LIMITS } from '@berth/protocol';
import { systemClock, type Clock } from './clock.js';
import { createConsoleLogger, type Logger } from './logger.js';
import { MemoryStore } from './store/memory-store.js';
import type { RetentionPolicy, Store } from './store/types.js';
import { allowAll, type Guard } from './http/guard.js';

/** Options of `createServer`. Every field is optional; `resolveServerOptions` applies the defaults. */
export interface ServerOptions {
  /** API keys accepted on the HTTP API (Bearer or bare `Authorization`). CLI: `BERTH_API_KEY`. Default: none (every request is 401). */
  apiKeys?: string[];
  /** Tokens workers present when dialing the WebSocket. CLI: `BERTH_WORKER_TOKEN`. Default: none (no worker can connect). */
  workerTokens?: string[];
  /** Endpoint ids known from the start. Default: `[]`. Workers that connect add theirs (see `acceptWorkerEndpoints`). */
  endpoints?: string[];
  /** A worker announcing an unknown endpoint registers it. Default: `true`. */
  acceptWorkerEndpoints?: boolean;
  /** Where jobs live. Default: a fresh `MemoryStore`. */
  store?: Store;
  /** Time source (tests inject a `ManualClock`). Default: the system clock. */
  clock?: Clock;
  /** Default: a console logger at `info` (`BERTH_LOG_LEVEL` in the CLI). */
  logger?: Logger;
  /** Retention after a terminal state, ms. Default: `{ async: 1_800_000, sync: 60_000 }`. */
  retention?: Partial<RetentionPolicy>;
  /** How often deadlines are swept, ms. `0` disables the timer (tests call `server.sweep()`). Default: 1000. */
  sweepIntervalMs?: number;
  /** Heartbeat interval on the worker socket, ms; a worker silent for 3 intervals is dropped. Default: 5000. */
  heartbeatMs?: number;
  /** How long a disconnected worker keeps its running jobs before they are requeued, ms. Default: 10000. */
  workerGraceMs?: number;
  /** Attempts before a job whose workers keep getting lost is FAILED ("worker lost"). Default: 3. */
  maxAttempts?: number;
  /** Checks run before each operation after authentication (rate limits plug in here). Default: allow all. */
  guard?: Guard;
}

export interface ResolvedServerOptions {
  apiKeys: string[];
  workerTokens: string[];
  endpoints: string[];
  acceptWorkerEndpoints: boolean;
  store: Store;
  clock: Clock;
  logger: Logger;
  retention: RetentionPolicy;
  sweepIntervalMs: number;
  heartbeatMs: number;
  workerGraceMs: number;
  maxAttempts: number;
  guard: Guard;
}

function nonNegative(name: string, v: number | undefined, def: number): number {
  if (v === undefined) return def;
  if (!Number.isFinite(v) || v < 0) throw new BerthError('invalid_request', `option ${name} must be a non-negative number, got ${String(v)}`);
  return v;
}

/** Applies defaults and checks every option; a bad option throws a message naming it and its value. */
export function resolveServerOptions(o: ServerOptions = {}): ResolvedServerOptions {
  for (const id of o.endpoints ?? []) {
    if (!ENDPOINT_ID_RE.test(id)) throw new BerthError('invalid_request', `option endpoints: "${id}" is not a valid endpoint id (${ENDPOINT_ID_RE})`);
  }
  const heartbeatMs = nonNegative('heartbeatMs', o.heartbeatMs, 5000);
  if (heartbeatMs === 0) throw new BerthError('invalid_request', 'option heartbeatMs must be positive');
  const maxAttempts = nonNegative('maxAttempts', o.maxAttempts, 3);
  if (maxAttempts < 1) throw new BerthError('invalid_request', 'option maxAttempts must be at least 1');
  return {
    apiKeys: [...(o.apiKeys ?? [])],
    workerTokens: [...(o.workerTokens ?? [])],
    endpoints: [...(o.endpoints ?? [])],
    acceptWorkerEndpoints: o.acceptWorkerEndpoints ?? true,
    store: o.store ?? new MemoryStore(),
    clock: o.clock ?? systemClock,
    logger: o.logger ?? createConsoleLogger('info'),
    retention: {
      async: nonNegative('retention.async', o.retention?.async, LIMITS.retentionAsync),
      sync: nonNegative('retention.sync', o.retention?.sync, LIMITS.retentionSync),
    },
    sweepIntervalMs: nonNegative('sweepIntervalMs', o.sweepIntervalMs, 1000),
    heartbeatMs,
    workerGraceMs: nonNegative('workerGraceMs', o.workerGraceMs, 10_000),
    maxAttempts,
    guard: o.guard ?? allowAll,
  };
}
