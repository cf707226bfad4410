/** Options of `verifyWebhook`. */
export interface VerifyOptions {
  /** Largest difference between `webhook-timestamp` and now, seconds. Default `300` (Standard Webhooks'). */
  toleranceSec?: number;
  /** Now, ms since the epoch (tests). Default `Date.now()`. */
  now?: number;
}

/** A webhook whose signature, timestamp or headers do not check out. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
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
  const h = (name: string) => {
    const v = headers instanceof Headers ? headers.get(name) : headers[name];
    return Array.isArray(v) ? v[0] : (v ?? undefined);
  };
  const id = h('webhook-id');
  const ts = h('webhook-timestamp');
  const sigs = h('webhook-signature');
  if (!id || !ts || !sigs)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature');
  const now = (options.now ?? Date.now()) / 1000;
  if (!/^\d+$/.test(ts) || Math.abs(now - Number(ts)) > (options.toleranceSec ?? 300))
    throw new WebhookVerificationError('webhook-timestamp is too old, in the future or not a number');
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const keyBytes = fromBase64(secret.startsWith('whsec_') ? secret.slice(6) : secret);
  if (!keyBytes) throw new WebhookVerificationError('the secret is not whsec_<base64>');
  const key = await crypto.subtle.importKey('raw', keyBytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const signed = new TextEncoder().encode(`${id}.${ts}.${body}`);
  for (const s of sigs.split(' ')) {
    const [version, b64] = s.split(',');
    const sig = version === 'v1' && b64 ? fromBase64(b64) : undefined;
    // subtle.verify compares in constant time.
    if (sig && (await crypto.subtle.verify('HMAC', key, sig, signed))) return JSON.parse(body) as T;
  }
  throw new WebhookVerificationError('no webhook-signature matches the secret');
}

function fromBase64(s: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}
