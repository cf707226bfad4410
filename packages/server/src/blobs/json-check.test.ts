// The streaming checker against a whole-body reference (TextDecoder, JSON.parse, then a walk for depth and
// non-finite numbers: what parseJsonBody did before it used the checker), with chunks split at every offset.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JsonChecker, type JsonCheckOptions, type JsonCheckResult } from './json-check.js';
import { JsonCheckError } from './json-errors.js';

type Outcome = { ok: true; value: unknown } | { ok: false; code: string };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function reference(buf: Uint8Array, key?: string, maxDepth = 64): Outcome {
  let value: unknown;
  try {
    const text = utf8.decode(buf);
    if (text.trim() === '') return { ok: false, code: 'invalid_json' };
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: 'invalid_json' };
  }
  const walk = (v: unknown, d: number): string | undefined => {
    if (typeof v === 'number') return Number.isFinite(v) ? undefined : 'invalid_request';
    if (v === null || typeof v !== 'object') return undefined;
    if (d + 1 > maxDepth) return 'invalid_json';
    let found: string | undefined;
    for (const x of Object.values(v)) {
      const r = walk(x, d + 1);
      if (r === 'invalid_json') return r;
      found ??= r;
    }
    return found;
  };
  const bad = walk(value, 0);
  if (bad) return { ok: false, code: bad };
  if (key !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value)))
    return { ok: false, code: 'invalid_request' };
  return { ok: true, value };
}

/** Runs the checker over `chunks`; the value rebuilt from its result (fields + the span's bytes under `key`). */
function check(chunks: Uint8Array[], opts: Partial<JsonCheckOptions> = {}): Outcome & { result?: JsonCheckResult } {
  const c = new JsonChecker({ maxDepth: 64, ...opts });
  try {
    for (const ch of chunks) c.push(ch);
    const result = c.end();
    if (opts.key === undefined) return { ok: true, value: JSON.parse(utf8.decode(Buffer.concat(chunks))), result };
    const value: Record<string, unknown> = { ...result.fields };
    if (result.span)
      value[opts.key] = JSON.parse(
        Buffer.concat(chunks)
          .subarray(...result.span)
          .toString(),
      );
    return { ok: true, value, result };
  } catch (err) {
    expect(err).toBeInstanceOf(JsonCheckError);
    return { ok: false, code: (err as JsonCheckError).code };
  }
}

const splits = (b: Buffer) => Array.from({ length: b.length + 1 }, (_, i) => [b.subarray(0, i), b.subarray(i)]);

const VALID = [
  '{"input":{"a":[1,-2.5e-3,0,true,false,null,"x\\u00e9\\"\\\\\\n"]},"webhook":"http://x/y","policy":{"ttl":60000}}',
  '{"input":"é😀\u2028 \\ud83d\\ude00","input":{"last":[]},"s3Config":{"k":"v"}}',
  ' \n{ "\\u0069nput" : [ { } , [ ] ] , "__proto__" : {"polluted":true} } \t',
  '\ufeff{"input":{}}',
  '{"a":1E+2,"b":0.5e308,"c":-0,"d":1e-999}',
  '{}',
  '{"policy":{}}',
];
const INVALID = [
  '',
  '   ',
  '{"input":{}',
  '{"input":{},}',
  '{"input":01}',
  '{"input":1.}',
  '{"input":-}',
  '{"input":1e}',
  '{"input":tru}',
  '{"input":"\\x"}',
  '{"input":"\\u12G4"}',
  '{"input":"a\u0001"}',
  '{"input":1} x',
  '{"input" 1}',
  '{input:1}',
  "{'input':1}",
  '[1,2]',
  '"input"',
  '{"input":1e999}',
  '{"a":{"b":[0,-1E+400]}}',
  `{"input":1${'0'.repeat(250)}e99}`,
  `{"d":${'['.repeat(65)}${']'.repeat(65)}}`,
];

describe('JsonChecker against JSON.parse', () => {
  it.each([...VALID, ...INVALID])('agrees on %j split at every byte offset, with and without a key', (doc) => {
    const buf = Buffer.from(doc);
    for (const key of [undefined, 'input']) {
      const want = reference(buf, key);
      for (const chunks of [...splits(buf), [...buf].map((x) => Uint8Array.of(x))]) {
        const got = check(chunks, key === undefined ? {} : { key });
        expect({ ok: got.ok, code: got.ok ? undefined : got.code }, `${key} ${chunks.map((x) => x.length)}`).toEqual({
          ok: want.ok,
          code: want.ok ? undefined : want.code,
        });
        if (got.ok && want.ok) expect(got.value).toEqual(want.value);
      }
    }
  });

  it('agrees on bad UTF-8: overlong, surrogates, past U+10FFFF, truncated, stray continuation bytes', () => {
    const bad = [[0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80]];
    for (const seq of bad) {
      const buf = Buffer.concat([Buffer.from('{"input":"a'), Buffer.from(seq), Buffer.from('b"}')]);
      for (const chunks of splits(buf))
        expect(check(chunks, { key: 'input' })).toEqual({ ok: false, code: 'invalid_json' });
    }
    expect(check([Buffer.from([0xef, 0xbb])])).toEqual({ ok: false, code: 'invalid_json' });
  });

  it('agrees on 2000 random mutations of valid bodies, split at a random offset', () => {
    const alphabet = Buffer.from('{}[]",:0123456789.eE+-tfnrul\\ \nxa\u00e9');
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    let agreedValid = 0;
    for (let n = 0; n < 2000; n++) {
      const bytes = [...Buffer.from(VALID[rand(VALID.length)]!)];
      for (let m = 1 + rand(3); m > 0; m--) {
        const at = rand(bytes.length + 1);
        const op = rand(3);
        const x = alphabet[rand(alphabet.length)]!;
        if (op === 0) bytes.splice(at, 1);
        else if (op === 1) bytes.splice(at, 0, x);
        else bytes[at] = x;
      }
      const buf = Buffer.from(bytes);
      const cut = rand(buf.length + 1);
      for (const key of [undefined, 'input']) {
        const want = reference(buf, key);
        const got = check([buf.subarray(0, cut), buf.subarray(cut)], key === undefined ? {} : { key });
        expect(got.ok ? 'ok' : got.code, `${buf.toString()} (${key})`).toBe(want.ok ? 'ok' : want.code);
        if (got.ok && want.ok) {
          expect(got.value).toEqual(want.value);
          agreedValid++;
        }
      }
    }
    expect(agreedValid).toBeGreaterThan(100); // the fuzz reached valid bodies too, not only broken ones
  });
});

describe('JsonChecker results', () => {
  const run = (doc: string | Buffer, opts: Partial<JsonCheckOptions> = {}) => {
    const c = new JsonChecker({ maxDepth: 64, ...opts });
    c.push(Buffer.from(doc));
    return c.end();
  };
  const fails = (doc: string, opts: Partial<JsonCheckOptions> = {}) => {
    try {
      run(doc, opts);
    } catch (err) {
      return err as { code: string; message: string; details: unknown };
    }
    throw new Error(`accepted ${doc}`);
  };

  it('gives the span of the last value under the key, its kind, size and SHA-256', () => {
    const doc = '{"input":[1],"webhook":"http://h","\\u0069nput":  {"x":"}"} }';
    const r = run(doc, { key: 'input' });
    expect(doc.slice(...r.span!)).toBe('{"x":"}"}');
    expect(r.keyKind).toBe('object');
    expect(r.fields).toEqual({ webhook: 'http://h' });
    expect(r.size).toBe(doc.length);
    expect(r.sha256).toBe(createHash('sha256').update(doc).digest('hex'));
    expect(run('{"input":"s"}', { key: 'input' })).toMatchObject({ keyKind: 'other', span: [9, 12] });
    expect(run('{"policy":{}}', { key: 'input' })).toMatchObject({ keyKind: 'absent', fields: { policy: {} } });
    expect(run('{"a":1}', { hash: false }).sha256).toBe('');
  });

  it('keeps "__proto__" an own field, as JSON.parse does', () => {
    const r = run('{"__proto__":{"polluted":1},"input":{}}', { key: 'input' });
    expect(Object.hasOwn(r.fields, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('names the path of a number too big for a float, and the depth it allows', () => {
    expect(fails('{"input":{"deep":{"list":[0,1e999]}}}').message).toMatch(
      /^input\.deep\.list\[1\]: number out of range/,
    );
    expect(fails('{"input":{"a.b":[[-2e308]]}}').details).toEqual({ field: 'input.a.b[0][0]' });
    expect(fails('1e400').message).toMatch(/^the body: number out of range/);
    expect(run(`[${'9'.repeat(308)}, 1.7976931348623157e308, 0.1e309]`).size).toBeGreaterThan(0);
    expect(fails(`{"a":${'['.repeat(5)}${']'.repeat(5)}}`, { maxDepth: 5 }).message).toBe(
      'JSON nested deeper than 5 levels',
    );
    expect(run(`{"a":${'['.repeat(4)}${']'.repeat(4)}}`, { maxDepth: 5 }).size).toBe(14);
  });

  it('refuses the other fields past maxOtherBytes with 413 naming the field, before reading on', () => {
    const e = fails(`{"input":{},"webhook":"${'x'.repeat(100)}"}`, { key: 'input', maxOtherBytes: 64 });
    expect(e.code).toBe('payload_too_large');
    expect(e.message).toContain('"webhook"');
    // A 19 MB body of padding outside input: refused within the first slice, in a few ms of CPU.
    const pad = Buffer.from(`{"input":{},"pad":[${'{},'.repeat(6_300_000)}{}]}`);
    const c = new JsonChecker({ maxDepth: 64, key: 'input' });
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    let err: { code?: string; details?: unknown } = {};
    let pushed = 0;
    try {
      for (; pushed < pad.length; pushed += 1 << 20) c.push(pad.subarray(pushed, pushed + (1 << 20)));
    } catch (x) {
      err = x as typeof err;
    }
    const used = process.cpuUsage(cpu);
    const ms = (used.user + used.system) / 1000;
    console.log(`19 MB padding body refused in ${(performance.now() - t0).toFixed(1)} ms, ${ms.toFixed(1)} ms of CPU`);
    expect(err).toMatchObject({ code: 'payload_too_large', details: { field: 'pad', limit: 65536 } });
    expect(pushed).toBe(0); // refused inside the first 1 MiB chunk: the rest is never scanned
    expect(ms).toBeLessThan(200); // the process's CPU (GC threads included), on a machine shared with other work
  });

  it('checks a 20 MB body with one long string, and the same split into random chunks', () => {
    const input = { image: 'QUJD'.repeat(5 * 1024 * 1024), deep: [[[1e300]]], s: 'é' };
    const body = Buffer.from(JSON.stringify({ webhook: 'http://h', input }));
    let seed = 7;
    const chunks: Buffer[] = [];
    for (let i = 0; i < body.length; ) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const n = 1 + (seed % 200_000);
      chunks.push(body.subarray(i, i + n));
      i += n;
    }
    const t0 = performance.now();
    const r = check(chunks, { key: 'input' });
    console.log(
      `20 MB body in ${chunks.length} chunks checked in ${(performance.now() - t0).toFixed(0)} ms (SHA-256 included)`,
    );
    expect(r.ok && r.value).toEqual({ webhook: 'http://h', input });
    expect(r.result?.sha256).toBe(createHash('sha256').update(body).digest('hex'));
    expect(check([body], { maxDepth: 4 })).toEqual({ ok: false, code: 'invalid_json' });
  });

  it('throws the same error again on every call once the body is known bad', () => {
    const c = new JsonChecker({ maxDepth: 64 });
    expect(() => c.push(Buffer.from('{]'))).toThrow(/unexpected '\]' at byte 1/);
    expect(() => c.push(Buffer.from('}'))).toThrow(/unexpected '\]' at byte 1/);
    expect(() => c.end()).toThrow(/unexpected '\]' at byte 1/);
  });
});
