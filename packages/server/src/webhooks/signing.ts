import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signature headers (https://www.standardwebhooks.com): `webhook-signature` is
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed with the bytes of `whsec_<base64>`. Written with
 * node:crypto (a few lines) so the tests can check it against the independent `standardwebhooks` package.
 */
export function signatureHeaders(key: Buffer, id: string, timestampSec: number, body: string): Record<string, string> {
  const sig = createHmac('sha256', key).update(`${id}.${timestampSec}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSec), 'webhook-signature': `v1,${sig}` };
}
