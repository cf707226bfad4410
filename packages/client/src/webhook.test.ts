// verifyWebhook (WebCrypto) against signatures made by the independent `standardwebhooks` package and by hand.
import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { verifyWebhook, WebhookVerificationError } from './webhook.js';

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ id: 'abc-u1', status: 'COMPLETED', output: { n: 1 } });
const now = Date.parse('2026-11-26T08:00:00Z');
const ts = Math.floor(now / 1000);
const sign = (s = secret, b = body, t = ts, id = 'msg_1') => ({
  'webhook-id': id,
  'webhook-timestamp': String(t),
  'webhook-signature': new Webhook(s).sign(id, new Date(t * 1000), b),
});

describe('verifyWebhook', () => {
  it('accepts a delivery signed by standardwebhooks and answers the parsed body (record or Headers)', async () => {
    const headers = sign();
    expect(await verifyWebhook(secret, headers, body, { now })).toEqual(JSON.parse(body));
    expect(await verifyWebhook(secret, new Headers(headers), new TextEncoder().encode(body), { now })).toEqual(
      JSON.parse(body),
    );
  });

  it('accepts the signature the server computes (node:crypto, as packages/server/src/webhooks/signing.ts)', async () => {
    const key = Buffer.from(secret.slice(6), 'base64');
    const sig = createHmac('sha256', key).update(`m2.${ts}.${body}`).digest('base64');
    const headers = { 'webhook-id': 'm2', 'webhook-timestamp': String(ts), 'webhook-signature': `v1,bogus v1,${sig}` };
    expect(await verifyWebhook(secret, headers, body, { now })).toMatchObject({ id: 'abc-u1' });
  });

  it.each([
    ['a changed body', () => [secret, sign(), body.replace('1}', '2}')]],
    ['another secret', () => [`whsec_${randomBytes(32).toString('base64')}`, sign(), body]],
    ['another webhook-id', () => [secret, { ...sign(), 'webhook-id': 'msg_2' }, body]],
    ['a timestamp 6 minutes old', () => [secret, sign(secret, body, ts - 360), body]],
    ['missing headers', () => [secret, { 'webhook-id': 'x' }, body]],
    [
      'a v2 signature only',
      () => [secret, { ...sign(), 'webhook-signature': sign()['webhook-signature'].replace('v1,', 'v2,') }, body],
    ],
  ] as const)('refuses %s', async (_name, make) => {
    const [s, h, b] = make() as [string, Record<string, string>, string];
    await expect(verifyWebhook(s, h, b, { now })).rejects.toBeInstanceOf(WebhookVerificationError);
  });
});
