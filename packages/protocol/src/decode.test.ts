import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decode, decodeJson, decodeServerMessage, decodeWorkerMessage, type DecodeResult } from './decode.js';
import { JobObject, JobRequest } from './job.js';
import { ServerMessage, WorkerMessage } from './ws.js';

/** A small seeded PRNG (mulberry32) so failures reproduce. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXT_DECODERS: [string, (text: string) => DecodeResult<unknown>][] = [
  ['decodeWorkerMessage', decodeWorkerMessage],
  ['decodeServerMessage', decodeServerMessage],
  ['decodeJson(JobRequest)', (t) => decodeJson(JobRequest, t)],
  ['decodeJson(JobObject)', (t) => decodeJson(JobObject, t)],
];
const SCHEMAS: [string, z.ZodType][] = [
  ['WorkerMessage', WorkerMessage],
  ['ServerMessage', ServerMessage],
  ['JobRequest', JobRequest],
  ['JobObject', JobObject],
];

/** Calls `fn`, failing the test if it throws, and checks the result shape; a refusal must read like a sentence. */
function settle(fn: () => DecodeResult<unknown>, label: string): DecodeResult<unknown> {
  let r: DecodeResult<unknown>;
  try {
    r = fn();
  } catch (err) {
    throw new Error(`${label} threw: ${String(err)}`);
  }
  if (r.ok) return r;
  expect(typeof r.error, label).toBe('string');
  expect(r.error.length, label).toBeGreaterThan(3);
  expect(r.error.length, `${label}: error too long to read`).toBeLessThan(600);
  expect(r.error, label).not.toContain('[object Object]');
  for (const issue of r.issues ?? [])
    expect(typeof issue.path === 'string' && typeof issue.message === 'string', label).toBe(true);
  return r;
}

function randomText(rand: () => number): string {
  const alphabet = '{}[]":,.-+0123456789eEtrufalsn \\/\n\t\u0000\u00e9\u{1F600}\ud800abcxyz_type';
  const chars = Array.from(alphabet);
  const len = Math.floor(rand() * 80);
  let s = '';
  for (let i = 0; i < len; i++) s += chars[Math.floor(rand() * chars.length)];
  return s;
}

const deep = (n: number, open: string, close: string, inner = ''): string => open.repeat(n) + inner + close.repeat(n);

const GARBAGE_TEXT: string[] = [
  '',
  ' ',
  'null',
  'undefined',
  'NaN',
  'true',
  '0',
  '-1',
  '1e309',
  '""',
  '[]',
  '{}',
  '{"type":null}',
  '{"type":{}}',
  '{"type":["hello"]}',
  '{"type":"hello"}',
  '{"type":"job.complete"}',
  '\ufeff{"type":"ping","t":1}',
  '"\\ud800"',
  '{"type":"ping","t":1}garbage',
  deep(100_000, '[', ']'),
  deep(50_000, '{"a":', '}', '1'),
  `{"type":${deep(10_000, '[', ']')}}`,
  `"${'x'.repeat(5_000_000)}"`,
  'x'.repeat(5_000_000),
  `{"type":"${'h'.repeat(1_000_000)}"}`,
  `{"type":"error","code":"${'c'.repeat(1_000_000)}","message":"m"}`,
  '{"__proto__":{"type":"ping","t":1}}',
  '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
  '{"type":"hello","__proto__":{"protocol":1,"workerId":"w","endpointId":"e","concurrency":1,"stream":true}}',
  '{"input":{"__proto__":{"polluted":1}},"__proto__":{"polluted":1}}',
  '{"input":"x","policy":{"ttl":"1e400"}}',
];

describe('decoders never throw', () => {
  it.each(TEXT_DECODERS)('%s refuses garbage text with a readable error', (name, fn) => {
    for (const text of GARBAGE_TEXT) {
      const r = settle(() => fn(text), `${name}(${JSON.stringify(text.slice(0, 60))})`);
      if (!text.startsWith('{"input":{')) expect(r.ok, `${name}(${text.slice(0, 60)})`).toBe(false);
    }
    expect(fn('x'.repeat(100))).toEqual({ ok: false, error: 'not valid JSON' });
  });

  it.each(TEXT_DECODERS)('%s survives random strings', (name, fn) => {
    const rand = random(name.length);
    for (let i = 0; i < 2_000; i++) {
      const text = randomText(rand);
      settle(() => fn(text), `${name}(${JSON.stringify(text)})`);
    }
  });

  it.each(TEXT_DECODERS)('%s survives mutated valid messages', (name, fn) => {
    const rand = random(7 + name.length);
    const seeds: Record<string, unknown>[] = [
      {
        type: 'hello',
        protocol: 1,
        workerId: 'w',
        endpointId: 'e',
        concurrency: 2,
        stream: false,
        inflight: [{ id: 'j', attempt: 1 }],
      },
      { type: 'job.stream', id: 'j', attempt: 1, seq: 0, chunks: ['a'] },
      { type: 'job.assign', id: 'j', attempt: 1, input: { a: 1 }, deadline: 5 },
      { type: 'welcome', protocol: 1, workerId: 'w', heartbeatMs: 1000, stale: [] },
      {
        input: { a: 1 },
        webhook: 'https://x.org',
        policy: { ttl: 20_000 },
        s3Config: { accessId: 'a', accessSecret: 's', bucketName: 'b', endpointUrl: 'https://s3.x.org' },
      },
      { id: 'j', status: 'COMPLETED', output: 1, delayTime: 3 },
    ];
    const junk = [
      null,
      -1,
      0,
      1.5,
      '',
      'x',
      [],
      {},
      [[[]]],
      { __proto__: null },
      true,
      'IN_QUEUE',
      1e308,
      'x'.repeat(10_000),
    ];
    for (let i = 0; i < 2_000; i++) {
      const msg: Record<string, unknown> = { ...seeds[Math.floor(rand() * seeds.length)] };
      const keys = Object.keys(msg);
      const key = keys[Math.floor(rand() * keys.length)] ?? 'type';
      if (rand() < 0.3) delete msg[key];
      else msg[key] = junk[Math.floor(rand() * junk.length)];
      let text = JSON.stringify(msg);
      if (rand() < 0.2) text = text.slice(0, Math.floor(rand() * text.length));
      settle(() => fn(text), `${name}(${text.slice(0, 120)})`);
    }
  });

  it.each(SCHEMAS)('decode(%s) refuses hostile values without throwing', (name, schema) => {
    const cyclic: Record<string, unknown> = { type: 'ping' };
    cyclic.t = cyclic;
    cyclic.input = cyclic;
    let nested: unknown = [];
    for (let i = 0; i < 100_000; i++) nested = [nested];
    const throwing = new Proxy(
      {},
      {
        get: () => {
          throw new Error('trap');
        },
        has: () => {
          throw new Error('trap');
        },
        ownKeys: () => {
          throw new Error('trap');
        },
        getPrototypeOf: () => {
          throw new Error('trap');
        },
        getOwnPropertyDescriptor: () => {
          throw new Error('trap');
        },
      },
    );
    const getter = Object.defineProperty({}, 'type', {
      enumerable: true,
      get: () => {
        throw new Error('getter');
      },
    });
    const values: unknown[] = [
      null,
      undefined,
      0,
      NaN,
      Infinity,
      -0,
      10n,
      Symbol('s'),
      () => 1,
      'x'.repeat(5_000_000),
      nested,
      throwing,
      getter,
      new Date(),
      new Map([['type', 'ping']]),
      Object.create(null),
      JSON.parse('{"__proto__":{"type":"ping","t":1,"input":{}}}'),
      new Error('x'),
      Promise.resolve({ type: 'ping', t: 1 }),
    ];
    for (const [i, value] of values.entries()) {
      const r = settle(() => decode(schema, value), `decode(${name}, #${i})`);
      expect(r.ok, `decode(${name}, #${i})`).toBe(false);
    }
    // Inherited keys cannot come out of JSON.parse; zod reads them like own keys, which is fine: only no throw.
    settle(() => decode(schema, Object.create({ type: 'ping', t: 1, input: {} })), `decode(${name}, inherited)`);
    settle(() => decode(schema, cyclic), `decode(${name}, cyclic)`);
    settle(
      () => decode(schema, { type: 'job.complete', id: 'j', attempt: 1, input: { deep: nested }, output: nested }),
      `decode(${name}, deep)`,
    );
  });

  it('reports a refinement that throws as a refusal', () => {
    const schema = z.string().refine(() => {
      throw new Error('refine blew up');
    });
    expect(decode(schema, 'x')).toMatchObject({ ok: false, error: expect.stringContaining('validation failed') });
  });

  it('leaves Object.prototype untouched', () => {
    for (const text of GARBAGE_TEXT.filter((t) => t.includes('__proto__')))
      for (const [, fn] of TEXT_DECODERS) fn(text);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(Object.prototype)).toEqual([]);
  });
});

describe('decode results', () => {
  it('carry the dotted path of the first issue in the error and all issues beside it', () => {
    const r = decode(JobRequest, { input: {}, policy: { ttl: 1, executionTimeout: 1 } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(/^policy\.(ttl|executionTimeout): /);
    expect(r.issues?.map((i) => i.path).sort()).toEqual(['policy.executionTimeout', 'policy.ttl']);
  });

  it('put no path prefix on a root issue', () => {
    expect(decode(JobRequest, 5)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Invalid input/),
      issues: [{ path: '' }],
    });
  });

  it('return the parsed value on success', () => {
    expect(decodeJson(JobRequest, '{"input":{"prompt":"hi"}}')).toEqual({
      ok: true,
      value: { input: { prompt: 'hi' } },
    });
  });
});
