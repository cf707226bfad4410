import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { API_KEY, ScriptedWorker, bodyReader, call, listening } from '../testing.test-helpers.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';

// A streamed chunk costs one SQLite commit: the SSE reader is woken as the chunk is written, so its take joins
// the append's batch (it was two: the append's commit, then the take's). The reader still receives the chunk
// only after that commit.
const dir = mkdtempSync(join(tmpdir(), 'berth-stream-commits-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it.each([
  ['in memory', () => new SqliteStore({ file: ':memory:' })],
  ['on a file', () => new SqliteStore({ file: join(dir, 'stream.sqlite') })],
])('an SSE reader takes each chunk in the commit that stored it (SQLite %s)', async (_, open) => {
  const store = open();
  await using t = await listening({ store });
  const w = await ScriptedWorker.connect(t.url);
  const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id as string;
  await w.next('job.assign');
  const res = await fetch(`${t.url}/v2/echo/stream/${id}`, {
    headers: { authorization: `Bearer ${API_KEY}`, accept: 'text/event-stream' },
  });
  const body = bodyReader(res);
  const readUntil = body.until;
  w.send({ type: 'job.stream', id, attempt: 1, seq: 0, chunks: ['warm'] });
  await readUntil('"warm"');
  const n = 20;
  const before = store.commits;
  for (let i = 0; i < n; i++) {
    w.send({ type: 'job.stream', id, attempt: 1, seq: i + 1, chunks: [`c${i}`] });
    await readUntil(`"c${i}"`);
  }
  const perChunk = (store.commits - before) / n;
  expect(perChunk).toBeGreaterThanOrEqual(1);
  expect(perChunk).toBeLessThan(1.5);
  expect([...body.text.matchAll(/"output":"(c\d+)"/g)].map((m) => m[1])).toEqual(
    Array.from({ length: n }, (_, i) => `c${i}`),
  );
  w.send({ type: 'job.complete', id, attempt: 1, output: null });
  await readUntil('event: done');
  await w.close();
});
