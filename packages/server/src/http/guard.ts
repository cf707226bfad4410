import type { BerthError } from '@berth/protocol';
import type { JobTokenClaims } from '../tokens/job-token.js';

/** The operations of the queue API, as rate limits and key scopes name them. */
export type Operation =
  | 'run'
  | 'runsync'
  | 'status'
  | 'stream'
  | 'cancel'
  | 'retry'
  | 'purge-queue'
  | 'health'
  | 'requests'
  | 'batch'
  | 'openai'
  | 'lb';

/** What a stored API key may do (see `docs/api-keys.md`). Absent: everything. */
export interface KeyScope {
  /** Endpoints the key may use; `null`: all. */
  endpoints: readonly string[] | null;
  /** Only status, stream and health. */
  readOnly: boolean;
}

/**
 * Who is calling: the authenticated API key (by id, never the secret) and its scope. A job token stands for the
 * key that asked for it (its rate limits), limited to one endpoint, and carries its claims in `jobToken`.
 */
export interface Principal {
  keyId: string;
  scope?: KeyScope;
  /** Set when the caller presented a job token (docs/job-tokens.md) rather than an API key. */
  jobToken?: JobTokenClaims;
}

export interface GuardContext {
  principal: Principal;
  endpointId: string;
  operation: Operation;
  /** A read under a writing operation (the Batch Jobs GETs): a read-only key may call it. */
  read?: boolean;
}

/**
 * Runs after authentication and before an operation: returns an error to refuse it (rate limits, key scopes),
 * with optional extra headers such as `Retry-After`.
 */
export type Guard = (ctx: GuardContext) => { error: BerthError; headers?: Record<string, string> } | undefined;

export const allowAll: Guard = () => undefined;

/** Runs guards in order; the first refusal wins. */
export function combineGuards(...guards: Guard[]): Guard {
  const list = guards.filter((g) => g !== allowAll);
  if (list.length === 0) return allowAll;
  if (list.length === 1) return list[0]!;
  return (ctx) => {
    for (const g of list) {
      const r = g(ctx);
      if (r) return r;
    }
    return undefined;
  };
}

/** Calls `onRefused` for every request `guard` refuses (metrics), and answers what it answers. */
export function countRejections(guard: Guard, onRefused: (ctx: GuardContext) => void): Guard {
  return (ctx) => {
    const r = guard(ctx);
    if (r) onRefused(ctx);
    return r;
  };
}
