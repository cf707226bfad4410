// Issue #31: a body of 1 MiB or more is parsed on a pool thread and its `input` handed on as the bytes it came
// as (job.assign frame, store), a big `job.complete` output likewise (store, answer). What the worker and the
// client read must be exactly what a parse and re-serialization gave; bad big bodies get the same errors.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { API_KEY, ScriptedWorker, listening } from '../testing.test-helpers.js';
import { BIG_JSON_BYTES } from './json-pool.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-big-body-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const blob = (n: number) => 'ab+/'.repeat(Math.ceil(n / 4)).slice(0, n);

async function post(base: string, path: string, body: string) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

describe.each([
  ['memory', () => undefined],
  ['sqlite', () => new SqliteStore({ file: join(dir, `big-${Date.now()}.sqlite`) })],
])('big bodies (%s store)', (_name, makeStore) => {
  it('a 2 MiB input reaches the worker as sent (escapes, non-ASCII, the last of duplicate keys) and a 2 MiB output comes back', async () => {
    const store = makeStore();
    await using t = await listening(store ? { store } : {});
    const worker = await ScriptedWorker.connect(t.url);
    const image = blob(2 * 1024 * 1024);
    const input = { n: 1, image, s: 'é "q" \\ \u2028 😀', list: [1, 2.5, null, true, { k: [] }] };
    // Whitespace, a first `input` JSON.parse drops, and a key after it: the raw slice must be the last one.
    const body = `{ "input" : {"old": 1}, "input" :\n ${JSON.stringify(input, null, 1)} , "policy": {"ttl": 600000} }`;
    expect(body.length).toBeGreaterThan(BIG_JSON_BYTES);
    const answer = post(t.url, '/v2/echo/runsync?wait=10000', body);
    const assign = await worker.next('job.assign', 10_000);
    expect(assign.input).toEqual(input);
    const output = { image: `${image}é`, echo: input.s };
    worker.send({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output });
    const res = await answer;
    expect(res.status).toBe(200);
    expect(res.json['status']).toBe('COMPLETED');
    expect(res.json['output']).toEqual(output);
    const status = await fetch(`${t.url}/v2/echo/status/${assign.id}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    expect(((await status.json()) as Record<string, unknown>)['output']).toEqual(output);
    await worker.close();
  });
});

describe('bad big bodies', () => {
  it('get the errors a small body gets: syntax, depth, non-finite numbers, a non-object input', async () => {
    await using t = await listening();
    const big = blob(BIG_JSON_BYTES);
    const cases: [string, number, string, string?][] = [
      [`{"input":{"a":"${big}"}`, 400, 'invalid_json'], // truncated
      [`{"input":{"a":"${big}","x":1e999}}`, 400, 'invalid_request', 'input.x'],
      [`{"input":"${big}"}`, 400, 'invalid_request', 'input'],
      [`{"input":{"a":"${big}","d":${'['.repeat(200)}${']'.repeat(200)}}}`, 400, 'invalid_json'],
      [`{"input":{"a":"${big}"},"webhook":7}`, 400, 'invalid_request', 'webhook'],
    ];
    for (const [body, status, code, mention] of cases) {
      const res = await post(t.url, '/v2/echo/run', body);
      expect(res.status, body.slice(-40)).toBe(status);
      expect(res.json['code']).toBe(code);
      if (mention) expect(String(res.json['error'])).toContain(mention);
    }
  });
});
