import { describe, expect, it } from 'vitest';
import { decode } from './decode.js';
import { JobRequest, isTerminal, JOB_STATUSES } from './job.js';
import { LIMITS } from './limits.js';

const S3 = {
  accessId: 'AK',
  accessSecret: 'SK',
  bucketName: 'bucket',
  endpointUrl: 'https://s3.example.org',
  objectPath: 'out/',
};
const ok = (body: unknown) => decode(JobRequest, body);
const DAY = 24 * 3600_000;

function expectRefused(body: unknown, path: string): void {
  const r = ok(body);
  expect(r.ok, JSON.stringify(body)?.slice(0, 200)).toBe(false);
  if (!r.ok) {
    expect(r.issues?.map((i) => i.path)).toContain(path);
    expect(r.error).toMatch(/\S/);
  }
}

describe('JobRequest', () => {
  it('accepts the full documented body', () => {
    const body = {
      input: { prompt: 'hi', n: [1, { a: null }] },
      webhook: 'https://example.org/hook',
      policy: { executionTimeout: 600_000, ttl: DAY, lowPriority: true },
      s3Config: S3,
    };
    expect(ok(body)).toEqual({ ok: true, value: body });
    expect(ok({ input: {} })).toEqual({ ok: true, value: { input: {} } });
  });

  it.each([
    ['missing', {}],
    ['an array', { input: [] }],
    ['an array of pairs', { input: [['a', 1]] }],
    ['null', { input: null }],
    ['a string', { input: 'prompt' }],
    ['a number', { input: 42 }],
    ['a boolean', { input: true }],
  ])('refuses input that is %s', (_, body) => {
    const r = ok(body);
    expect(r).toMatchObject({ ok: false, error: expect.stringMatching(/^input: .*object/) });
  });

  it.each([null, [], 'x', 3])('refuses a body that is not an object (%j)', (body) => {
    expect(ok(body)).toMatchObject({ ok: false, error: expect.stringContaining('expected object') });
  });

  it('ignores unknown top-level keys such as webhookV2', () => {
    const r = ok({ input: { a: 1 }, webhookV2: { url: 'not validated', headers: 5 }, somethingElse: [1] });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value.input).toEqual({ a: 1 });
  });

  it('keeps input keys as data, including __proto__, without touching prototypes', () => {
    const r = ok(JSON.parse('{"input":{"__proto__":{"polluted":1},"a":2},"__proto__":{"polluted":1}}'));
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(Object.keys(r.value.input).sort()).toEqual(['__proto__', 'a']);
      expect(Object.getPrototypeOf(r.value.input)).toBe(Object.prototype);
      expect(Object.getPrototypeOf(r.value)).toBe(Object.prototype);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  describe('policy', () => {
    const bounds = [
      ['executionTimeout', LIMITS.executionTimeoutMin, LIMITS.executionTimeoutMax, 5_000],
      ['ttl', LIMITS.ttlMin, LIMITS.ttlMax, 10_000],
    ] as const;

    it('matches the contract bounds: executionTimeout 5 s..7 days, ttl 10 s..7 days', () => {
      for (const [, min, max, contractMin] of bounds) {
        expect(min).toBe(contractMin);
        expect(max).toBe(7 * DAY);
      }
    });

    it.each(bounds)('accepts %s at its bounds', (key, min, max) => {
      for (const v of [min, min + 1, max - 1, max])
        expect(ok({ input: {}, policy: { [key]: v } }).ok, `${key}=${v}`).toBe(true);
    });

    it.each(bounds)('refuses %s out of bounds, fractional or not a number', (key, min, max) => {
      for (const v of [
        min - 1,
        max + 1,
        0,
        -min,
        min + 0.5,
        Number.MAX_SAFE_INTEGER,
        `${min}`,
        null,
        true,
        [min],
        { ms: min },
      ]) {
        expectRefused({ input: {}, policy: { [key]: v } }, `policy.${key}`);
      }
      const r = ok({ input: {}, policy: { [key]: min - 1 } });
      expect(r).toMatchObject({ ok: false, error: expect.stringContaining(`at least ${min} ms`) });
    });

    it('takes lowPriority as a boolean only', () => {
      expect(ok({ input: {}, policy: { lowPriority: false } }).ok).toBe(true);
      expectRefused({ input: {}, policy: { lowPriority: 'yes' } }, 'policy.lowPriority');
    });

    it('is strict: unknown keys and non-objects are refused', () => {
      expectRefused({ input: {}, policy: { executionTimeout: 10_000, timeout: 5 } }, 'policy');
      expectRefused({ input: {}, policy: null }, 'policy');
      expectRefused({ input: {}, policy: [] }, 'policy');
      expect(ok({ input: {}, policy: {} }).ok).toBe(true);
    });
  });

  describe('webhook', () => {
    it.each(['http://example.org/hook', 'https://example.org:8443/a/b?c=d#e', 'http://127.0.0.1:3000/'])(
      'accepts %s',
      (webhook) => {
        expect(ok({ input: {}, webhook }).ok).toBe(true);
      },
    );

    it.each([
      'ftp://example.org/x',
      'javascript:alert(1)',
      'file:///etc/passwd',
      'data:text/plain,hi',
      'example.org/hook',
      '',
      'https://',
      `https://example.org/${'a'.repeat(2048)}`,
    ])('refuses %s', (webhook) => expectRefused({ input: {}, webhook }, 'webhook'));

    it.each([null, 42, { url: 'https://example.org' }])('refuses a non-string webhook (%j)', (webhook) => {
      expectRefused({ input: {}, webhook }, 'webhook');
    });
  });

  describe('s3Config', () => {
    it('accepts the five documented fields, objectPath optional', () => {
      expect(ok({ input: {}, s3Config: S3 }).ok).toBe(true);
      const { objectPath: _omit, ...rest } = S3;
      expect(ok({ input: {}, s3Config: rest }).ok).toBe(true);
    });

    it.each(['accessId', 'accessSecret', 'bucketName', 'endpointUrl'] as const)('requires a non-empty %s', (key) => {
      const { [key]: _omit, ...missing } = S3;
      expectRefused({ input: {}, s3Config: missing }, `s3Config.${key}`);
      expectRefused({ input: {}, s3Config: { ...S3, [key]: '' } }, `s3Config.${key}`);
      expectRefused({ input: {}, s3Config: { ...S3, [key]: 5 } }, `s3Config.${key}`);
    });

    it('refuses unknown keys, a bad endpointUrl and non-objects', () => {
      expectRefused({ input: {}, s3Config: { ...S3, region: 'us-east-1' } }, 's3Config');
      expectRefused({ input: {}, s3Config: { ...S3, endpointUrl: 'not a url' } }, 's3Config.endpointUrl');
      expectRefused({ input: {}, s3Config: 'AK:SK@bucket' }, 's3Config');
      expectRefused({ input: {}, s3Config: null }, 's3Config');
    });
  });
});

describe('job states', () => {
  it('are upper-case with exactly four terminal ones', () => {
    expect(JOB_STATUSES).toEqual(['IN_QUEUE', 'IN_PROGRESS', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
    expect(JOB_STATUSES.filter(isTerminal)).toEqual(['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT']);
  });
});
