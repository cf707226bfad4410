import { ALLOWABLE_KINDS, type AllowableKind } from './address-policy.js';
import { ConfigError } from '../errors.js';

/** `webhooks` of `createServer`: delivery of the job object to a job's `webhook` URL (see `docs/webhooks.md`). */
export interface WebhookOptions {
  /** Deliver from this process. Default: `true`. */
  enabled?: boolean;
  /** Standard Webhooks signing secret, `whsec_<base64>`; unset: deliveries are unsigned. CLI: `BERTH_WEBHOOK_SECRET`. */
  secret?: string;
  /** Attempts per delivery, the first included. Default: 3 (one try and 2 retries). */
  attempts?: number;
  /** ms between attempts. Default: 10000. */
  retryDelayMs?: number;
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
  return {
    enabled: o.enabled ?? true,
    key,
    attempts: Math.floor(num('attempts', o.attempts, 3, 1)),
    retryDelayMs: num('retryDelayMs', o.retryDelayMs, 10_000, 0),
    timeoutMs: num('timeoutMs', o.timeoutMs, 10_000, 1),
    allow: [...new Set(o.allow ?? [])],
    pollMs: num('pollMs', o.pollMs, 1000, 0),
  };
}
