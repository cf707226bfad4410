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

  it.each([
    ['an empty whsec_ secret', 'whsec_'],
    ['an empty secret', ''],
    ['a secret that is not base64', 'whsec_not base64!'],
    ['no secret at all (an unset environment variable)', undefined],
  ])('refuses %s with its own error (code invalid_secret), not a WebCrypto DataError', async (_name, s) => {
    const err = await verifyWebhook(s as string, sign(), body, { now }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookVerificationError);
    expect(err).toMatchObject({ name: 'WebhookVerificationError', code: 'invalid_secret' });
  });

  it('each refusal carries a stable code', async () => {
    const code = (p: Promise<unknown>) => p.catch((e: WebhookVerificationError) => e.code);
    expect(await code(verifyWebhook(secret, { 'webhook-id': 'x' }, body, { now }))).toBe('missing_headers');
    expect(await code(verifyWebhook(secret, sign(secret, body, ts - 360), body, { now }))).toBe('stale_timestamp');
    expect(await code(verifyWebhook(secret, sign(), `${body} `, { now }))).toBe('invalid_signature');
    // A body already parsed (express.json()) cannot be verified: say so instead of failing the HMAC.
    expect(await code(verifyWebhook(secret, sign(), JSON.parse(body) as string, { now }))).toBe('invalid_body');
    const notJson = 'not json';
    expect(await code(verifyWebhook(secret, sign(secret, notJson), notJson, { now }))).toBe('invalid_body');
  });

  it('checks the HMAC over the body bytes as received: bytes that decode alike are not interchangeable', async () => {
    // Two bodies differing in one invalid UTF-8 byte: a lossy decode maps both to U+FFFD, one string, one HMAC.
    const signedBytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    const tampered = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xfe]), Buffer.from('"}')]);
    const key = Buffer.from(secret.slice(6), 'base64');
    const hmac = (b: Buffer) =>
      createHmac('sha256', key)
        .update(Buffer.concat([Buffer.from(`m3.${ts}.`), b]))
        .digest('base64');
    const headers = {
      'webhook-id': 'm3',
      'webhook-timestamp': String(ts),
      'webhook-signature': `v1,${hmac(signedBytes)}`,
    };
    const refused = await verifyWebhook(secret, headers, new Uint8Array(tampered), { now }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'invalid_signature' });
    // The signed bytes themselves pass the HMAC, and are then refused for not being UTF-8 (never decoded lossily).
    const signed = await verifyWebhook(secret, headers, new Uint8Array(signedBytes), { now }).catch((e: unknown) => e);
    expect(signed).toMatchObject({ code: 'invalid_body' });
    // Valid UTF-8 bytes beyond ASCII verify as bytes and as the same text.
    const text = JSON.stringify({ prompt: 'caf\u00e9 \u65e5\u672c \u{1f600}' });
    const h = sign(secret, text);
    expect(await verifyWebhook(secret, h, new TextEncoder().encode(text), { now })).toEqual(JSON.parse(text));
    expect(await verifyWebhook(secret, h, text, { now })).toEqual(JSON.parse(text));
  });
});
