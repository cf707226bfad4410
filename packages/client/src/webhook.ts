/** Options of `verifyWebhook`. */
export interface VerifyOptions {
  /** Largest difference between `webhook-timestamp` and now, seconds. Default `300` (Standard Webhooks'). */
  toleranceSec?: number;
  /** Now, ms since the epoch (tests). Default `Date.now()`. */
  now?: number;
}

/**
 * Why a delivery was refused, stable across versions: `missing_headers` (no `webhook-id`, `webhook-timestamp` or
 * `webhook-signature`), `stale_timestamp` (not a number, or further from now than `toleranceSec`), `invalid_secret`
 * (not `whsec_<base64>` of at least one byte), `invalid_signature` (no `v1` signature matches), `invalid_body` (signed,
 * but not UTF-8 JSON).
 */
export type WebhookVerificationCode =
  | 'missing_headers'
  | 'stale_timestamp'
  | 'invalid_secret'
  | 'invalid_signature'
  | 'invalid_body';

/** A webhook whose signature, timestamp, headers, secret or body do not check out: every refusal of `verifyWebhook`. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly code: WebhookVerificationCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks a webhook delivery signed with Standard Webhooks (https://www.standardwebhooks.com), as Berth signs them
 * (`BERTH_WEBHOOK_SECRET`, docs/webhooks.md): HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<raw body>` keyed
 * with the bytes of `whsec_<base64>`. WebCrypto only, so it runs in Node, browsers, Deno, Bun and workers. Answers
 * the parsed body (the job object); throws `WebhookVerificationError` otherwise. Pass the body exactly as received.
 *
 * @example
 * const job = await verifyWebhook(process.env.BERTH_WEBHOOK_SECRET!, req.headers, rawBody);
 */
export async function verifyWebhook<T = unknown>(
  secret: string,
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): Promise<T> {
  const keyBytes =
    typeof secret === 'string' ? fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret) : undefined;
  // WebCrypto refuses an empty HMAC key with its own DataError: an empty secret is a bad secret like any other.
  if (!keyBytes || keyBytes.length === 0)
    throw new WebhookVerificationError('invalid_secret', 'the secret is not whsec_<base64 of at least one byte>');
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array))
    throw new WebhookVerificationError(
      'invalid_body',
      `pass the body exactly as received (a string or bytes), not a parsed value (got ${rawBody === null ? 'null' : typeof rawBody})`,
    );
  const h = (name: string) => {
    const v = headers instanceof Headers ? headers.get(name) : headers[name];
    return Array.isArray(v) ? v[0] : (v ?? undefined);
  };
  const id = h('webhook-id');
  const ts = h('webhook-timestamp');
  const sigs = h('webhook-signature');
  if (!id || !ts || !sigs)
    throw new WebhookVerificationError('missing_headers', 'missing webhook-id, webhook-timestamp or webhook-signature');
  const now = (options.now ?? Date.now()) / 1000;
  if (!/^\d+$/.test(ts) || Math.abs(now - Number(ts)) > (options.toleranceSec ?? 300))
    throw new WebhookVerificationError(
      'stale_timestamp',
      'webhook-timestamp is too old, in the future or not a number',
    );
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  // The HMAC covers the body's bytes as received: decoding them first would map invalid UTF-8 to U+FFFD, so two
  // different bodies would share one signature.
  const bytes = typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
  const prefix = new TextEncoder().encode(`${id}.${ts}.`);
  const signed = new Uint8Array(prefix.length + bytes.length);
  signed.set(prefix);
  signed.set(bytes, prefix.length);
  for (const s of sigs.split(' ')) {
    const [version, b64] = s.split(',');
    const sig = version === 'v1' && b64 ? fromBase64(b64) : undefined;
    // subtle.verify compares in constant time.
    if (sig && (await crypto.subtle.verify('HMAC', key, sig, signed))) return parseBody<T>(rawBody, bytes);
  }
  throw new WebhookVerificationError('invalid_signature', 'no webhook-signature matches the secret');
}

/** The signed body as JSON: bytes must be UTF-8 (decoded strictly), the text JSON. */
function parseBody<T>(rawBody: string | Uint8Array, bytes: Uint8Array): T {
  try {
    const text = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return JSON.parse(text) as T;
  } catch (err) {
    throw new WebhookVerificationError('invalid_body', 'the signed body is not UTF-8 JSON', { cause: err });
  }
}

function fromBase64(s: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}
