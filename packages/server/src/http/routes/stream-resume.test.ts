// Resumable /stream SSE (Last-Event-ID or ?from=) with a worker on a real socket, on the memory and SQLite stores.
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory/memory-store.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import type { Store } from '../../store/types.js';
import { API_KEY, ScriptedWorker, bodyReader, call, listening } from '../../testing.test-helpers.js';

const STORES: [string, () => Store][] = [
  ['memory store', () => new MemoryStore()],
  ['SQLite store', () => new SqliteStore({ file: ':memory:' })],
];

describe.each(STORES)('resumable /stream server-sent events (%s)', (_name, makeStore) => {
  const sse = (url: string, id: string, cursor: { from?: string; lastEventId?: string }, signal?: AbortSignal) =>
    fetch(`${url}/v2/echo/stream/${id}${cursor.from === undefined ? '' : `?from=${cursor.from}`}`, {
      headers: {
        authorization: `Bearer ${API_KEY}`,
        accept: 'text/event-stream',
        ...(cursor.lastEventId ? { 'last-event-id': cursor.lastEventId } : {}),
      },
      ...(signal ? { signal } : {}),
    });

  it('ids <attempt>.<n>; a reconnect with Last-Event-ID gets exactly the chunks after it; nothing is taken', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id as string;
    await w.next('job.assign');
    w.send({ type: 'job.stream', id, attempt: 1, seq: 0, chunks: ['a', 'b', 'c'] });
    const first = new AbortController();
    const body = bodyReader(await sse(t.url, id, { from: '0' }, first.signal));
    await body.until('id: 1.3\n');
    expect(body.text).toBe(
      'id: 1.1\ndata: {"output":"a"}\n\nid: 1.2\ndata: {"output":"b"}\n\nid: 1.3\ndata: {"output":"c"}\n\n',
    );
    first.abort(); // the reader saw up to 1.2 only, say: it resumes from there
    w.send({ type: 'job.stream', id, attempt: 1, seq: 3, chunks: ['d'] });
    const again = bodyReader(await sse(t.url, id, { from: '0', lastEventId: '1.2' }));
    w.send({ type: 'job.complete', id, attempt: 1, output: 'done' });
    await again.until('event: done');
    await again.until('\n\n');
    expect(again.text).toMatch(
      /^id: 1\.3\ndata: \{"output":"c"\}\n\nid: 1\.4\ndata: \{"output":"d"\}\n\nevent: done\n/,
    );
    // Resumable readers took nothing: a taking reader still gets every chunk.
    expect((await call(t.server, 'GET', `/v2/echo/stream/${id}`)).body.stream).toEqual(
      ['a', 'b', 'c', 'd'].map((output) => ({ output })),
    );
    await w.close();
  });

  it('?from= works as a cursor too; a malformed cursor is 400 invalid_request', async () => {
    await using t = await listening({ store: makeStore() });
    const w = await ScriptedWorker.connect(t.url);
    const id = (await call(t.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body.id as string;
    await w.next('job.assign');
    w.send({ type: 'job.stream', id, attempt: 1, seq: 0, chunks: [1, 2] });
    w.send({ type: 'job.complete', id, attempt: 1, output: [1, 2] });
    const body = bodyReader(await sse(t.url, id, { from: '1.1' }));
    await body.until('event: done');
    expect(body.text.startsWith('id: 1.2\ndata: {"output":2}\n\nevent: done\n')).toBe(true);
    for (const bad of ['x', '1', '1.', '-1.2'])
      expect(
        (await call(t.server, 'GET', `/v2/echo/stream/${id}?from=${bad}`, { headers: { accept: 'text/event-stream' } }))
          .body,
      ).toMatchObject({ code: 'invalid_request' });
    await w.close();
  });
});
