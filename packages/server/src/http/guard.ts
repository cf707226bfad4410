import type { BerthError } from '@berth/protocol';

/** The operations of the queue API, as rate limits and key scopes name them. */
export type Operation = 'run' | 'runsync' | 'status' | 'stream' | 'cancel' | 'retry' | 'purge-queue' | 'health';

/** Who is calling: the authenticated API key (by id, never the secret). */
export interface Principal {
  keyId: string;
}

export interface GuardContext {
  principal: Principal;
  endpointId: string;
  operation: Operation;
}

/**
 * Runs after authentication and before an operation: returns an error to refuse it (rate limits, key scopes),
 * with optional extra headers such as `Retry-After`.
 */
export type Guard = (ctx: GuardContext) => { error: BerthError; headers?: Record<string, string> } | undefined;

export const allowAll: Guard = () => undefined;
