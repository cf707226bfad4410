import { ALLOWABLE_KINDS, type AllowableKind } from './address-policy.js';
import { ConfigError } from '../errors.js';

/** `webhooks` of `createServer`: delivery of the job object to a job's `webhook` URL (see `docs/webhooks.md`). */
export interface WebhookOptions {
  /** Deliver from this process. Default: `true`. */
  enabled?: boolean;
  /** Standard Webhooks signing secret, `whsec_<base64>`; unset: deliveries are unsigned. CLI: `BERTH_WEBHOOK_SECRET`. */
  secret?: string;
  /**
   * Attempts per delivery, the first included. Default: 3 (one try and 2 retries, RunPod's). CLI:
   * `--webhook-retries <n>` (n + 1 attempts), or `webhooks.retries` in berth.config.json.
   */
  attempts?: number;
  /** ms before the first retry. Default: 10000. */
  retryDelayMs?: number;
  /**
   * Each retry waits this many times longer than the one before (exponential backoff), up to `maxRetryDelayMs`.
   * Default: 1 (every retry `retryDelayMs` after the previous attempt, RunPod's schedule).
   */
  retryBackoff?: number;
  /** Longest wait between two attempts, ms. Default: 3600000 (1 h), or `retryDelayMs` when longer. */
  maxRetryDelayMs?: number;
  /** ms one attempt may take, connecting included. Default: 10000. */
  timeoutMs?: number;
  /**
   * Non-public address kinds a target may resolve to: `'loopback'`, `'private'`, `'link-local'`. Unspecified,
   * multicast and reserved addresses are never dialed. CLI: `BERTH_WEBHOOK_ALLOW=loopback,private`.
   * Default: `[]` (public addresses only); `berth dev` allows `loopback`.
   */
  allow?: AllowableKind[];
  /** How often the stored outbox is checked for due deliveries, ms (also after a restart). Default: 1000. */
  pollMs?: number;
}

export interface ResolvedWebhookOptions {
  enabled: boolean;
  /** The decoded signing key, or undefined. */
  key: Buffer | undefined;
  attempts: number;
  retryDelayMs: number;
  retryBackoff: number;
  maxRetryDelayMs: number;
  timeoutMs: number;
  allow: AllowableKind[];
  pollMs: number;
}

function num(name: string, v: number | undefined, def: number, min: number): number {
  if (v === undefined) return def;
  if (!Number.isFinite(v) || v < min)
    throw new ConfigError(`option webhooks.${name} must be a number >= ${min}, got ${String(v)}`);
  return v;
}

/**
 * ms between attempt `n` (1: the first) and the next: `retryDelayMs x retryBackoff^(n-1)`, at most
 * `maxRetryDelayMs`. With 10 attempts, 10 s, backoff 2 and the 1 h cap: 10 s, 20 s, 40 s ... 42 min, about 1.4 h
 * in all.
 */
export function retryDelay(
  o: Pick<ResolvedWebhookOptions, 'retryDelayMs' | 'retryBackoff' | 'maxRetryDelayMs'>,
  n: number,
) {
  return Math.min(o.maxRetryDelayMs, Math.round(o.retryDelayMs * o.retryBackoff ** (n - 1)));
}

/** Applies the defaults; a bad value throws naming the option. */
export function resolveWebhookOptions(o: WebhookOptions = {}): ResolvedWebhookOptions {
  let key: Buffer | undefined;
  if (o.secret !== undefined) {
    const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(o.secret);
    key = m ? Buffer.from(m[1]!, 'base64') : undefined;
    if (!key || key.length < 24)
      throw new ConfigError('option webhooks.secret must look like whsec_<base64 of 24 to 64 random bytes>');
  }
  for (const k of o.allow ?? []) {
    if (!(ALLOWABLE_KINDS as readonly string[]).includes(k))
      throw new ConfigError(`option webhooks.allow: "${String(k)}" is not one of ${ALLOWABLE_KINDS.join(', ')}`);
  }
  const retryDelayMs = num('retryDelayMs', o.retryDelayMs, 10_000, 0);
  return {
    enabled: o.enabled ?? true,
    key,
    attempts: Math.floor(num('attempts', o.attempts, 3, 1)),
    retryDelayMs,
    retryBackoff: num('retryBackoff', o.retryBackoff, 1, 1),
    maxRetryDelayMs: num('maxRetryDelayMs', o.maxRetryDelayMs, Math.max(3_600_000, retryDelayMs), 0),
    timeoutMs: num('timeoutMs', o.timeoutMs, 10_000, 1),
    allow: [...new Set(o.allow ?? [])],
    pollMs: num('pollMs', o.pollMs, 1000, 0),
  };
}
