import type { ServerOptions } from '@berth/server';
import { UsageError } from './internal/usage-error.js';
import type { WebhookSchedule } from './config/types.js';

/** `--webhook-retries` in the help of `berth dev` and `berth serve`. */
export const WEBHOOK_RETRIES_HELP = `      --webhook-retries <n>
                          retries of a failed webhook delivery after the first attempt (default 2, or
                          webhooks.retries in the config file; 10 s apart unless the config sets a backoff)
`;

/** The flag definition `parseFlags` takes. */
export const WEBHOOK_FLAGS = { 'webhook-retries': { type: 'string' } } as const;

/** Most retries a delivery may have (with a 1 h cap between them, days of retrying). */
const MAX_RETRIES = 100;

/** `--webhook-retries <n>`: a whole number from 0 to 100, or undefined when not given. */
export function parseWebhookRetries(command: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,3}$/.test(value) || Number(value) > MAX_RETRIES)
    throw new UsageError(`--webhook-retries must be a whole number from 0 to ${MAX_RETRIES} (got "${value}")`, command);
  return Number(value);
}

/**
 * The webhook options of the server: the environment's (`edgeServerOptions`: secret, allowed targets), then the
 * config file's retry schedule, then `--webhook-retries` (n retries: n + 1 attempts).
 */
export function webhookOptions(
  edge: ServerOptions['webhooks'],
  schedule: WebhookSchedule | undefined,
  retries: number | undefined,
): NonNullable<ServerOptions['webhooks']> {
  const out: NonNullable<ServerOptions['webhooks']> = { ...edge };
  const n = retries ?? schedule?.retries;
  if (n !== undefined) out.attempts = n + 1;
  if (schedule?.retryDelayMs !== undefined) out.retryDelayMs = schedule.retryDelayMs;
  if (schedule?.retryBackoff !== undefined) out.retryBackoff = schedule.retryBackoff;
  if (schedule?.maxRetryDelayMs !== undefined) out.maxRetryDelayMs = schedule.maxRetryDelayMs;
  return out;
}
