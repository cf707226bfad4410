import { createHash } from 'node:crypto';
import { BerthError } from '@berth/protocol';
import type { JobRecord } from '../store/types.js';
import { RawJson } from '../core/raw-json.js';

/** What scopes an `Idempotency-Key`: the API key and the route (`/run` or `/runsync`) of one endpoint. */
export interface IdempotencyScope {
  keyId: string;
  key: string;
}

const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** The `Idempotency-Key` header, or undefined; a malformed one is refused (400 `invalid_request`). */
export function idempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (!KEY_RE.test(header))
    throw new BerthError(
      'invalid_request',
      'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good key)',
    );
  return header;
}

/**
 * The job id a key stands for: derived from the API key, the endpoint, the route and the key (a SHA-256, shaped
 * like the ids Berth hands out). The id is the key's record: the store's primary key makes the first submit win
 * on every replica at once, and the key lives exactly as long as its job (its retention, or its ttl).
 */
export function idempotentJobId(scope: IdempotencyScope, endpointId: string, sync: boolean): string {
  const h = createHash('sha256')
    .update(`berth-idempotency\0${scope.keyId}\0${endpointId}\0${sync ? 'runsync' : 'run'}\0${scope.key}`)
    .digest('hex');
  const uuid = `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  return `${sync ? 'sync-' : ''}${uuid}-u1`;
}

/** JSON text with sorted object keys: two bodies that differ only in key order are the same request. */
function canonical(v: unknown): string {
  // A big input kept as bytes (or in a blob file) is compared by its value: read and parsed here, which only an
  // idempotent retry of a big body pays.
  if (v instanceof RawJson) return canonical(v.value);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** What a request fixed in its job: a retry must match it. */
function requestOf(j: JobRecord): string {
  return canonical({
    input: j.input,
    webhook: j.webhook,
    events: j.webhookEvents,
    s3: j.s3Config,
    timeout: j.executionTimeout,
    low: j.lowPriority,
    ttl: j.expiresAt - j.createdAt,
    cost: j.cost,
  });
}

/** The stored job answers a retry of `fresh`, or 409 `idempotency_key_reused` when the bodies differ. */
export function sameRequestOrRefuse(stored: JobRecord, fresh: JobRecord, key: string): JobRecord {
  if (requestOf(stored) === requestOf(fresh)) return stored;
  throw new BerthError(
    'idempotency_key_reused',
    `Idempotency-Key ${JSON.stringify(key.slice(0, 64))} was already used for job ${stored.id} with a different body; use a new key for a new request`,
    { jobId: stored.id },
  );
}
