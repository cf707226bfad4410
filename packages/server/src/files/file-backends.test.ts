import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import type { Store } from '../store/types.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { PgStore } from '../store/postgres/pg-store.js';
import { dropSchema, PG_TEST_URL, pgUnavailable, testSchema } from '../store/postgres/pg-test-db.test-helpers.js';
import { ScriptedWorker, WORKER_TOKEN, call, listening } from '../testing.test-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-file-backends-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const skipPg = await pgUnavailable();
const DAY = 24 * 3600_000;

/** Two stores sharing their data (PostgreSQL: one schema), or the disk backend (a memory store, a folder). */
const BACKENDS: [
  string,
  () => Promise<{ stores: Store[]; filesDir?: string; done(): Promise<void> }>,
  string | undefined,
][] = [
  [
    'disk',
    async () => ({ stores: [new MemoryStore()], filesDir: join(tmp, `d${Math.random()}`), done: async () => {} }),
    undefined,
  ],
  [
    'PostgreSQL',
    async () => {
      const schema = testSchema();
      const stores = [
        await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 3 }),
        await PgStore.open({ url: PG_TEST_URL, schema, poolSize: 3 }),
      ];
      return { stores, done: () => dropSchema(schema) };
    },
    skipPg,
  ],
];

describe.each(BACKENDS)('output files on %s', (name, open, skip) => {
  it.skipIf(skip !== undefined)(
    `streamed downloads with HEAD and Range; ${name === 'PostgreSQL' ? 'any replica serves the URL; ' : ''}refused and deleted after 7 days${skip ? ` (skipped: ${skip})` : ''}`,
    async () => {
      const clock = new ManualClock(Date.UTC(2026, 0, 1));
      const b = await open();
      try {
        await using a = await listening({
          clock,
          store: b.stores[0]!,
          ...(b.filesDir ? { filesDir: b.filesDir } : {}),
        });
        const w = await ScriptedWorker.connect(a.url);
        await w.next('welcome');
        const { body } = await call(a.server, 'POST', '/v2/echo/run', { body: { input: {} } });
        await w.next('job.assign');
        const data = Buffer.from(Array.from({ length: 1_000_003 }, (_, i) => (i * 31 + 7) & 255));
        const up = await fetch(`${a.url}/v2/_worker/files/${body.id}?ext=png`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'content-type': 'image/png' },
          body: data,
        });
        expect(up.status).toBe(200);
        const path = new URL(((await up.json()) as { url: string }).url);
        const urls = [`${a.url}${path.pathname}${path.search}`];
        const others: AsyncDisposable[] = [];
        if (b.stores[1]) {
          const other = await listening({ clock, store: b.stores[1] });
          others.push(other);
          urls.push(`${other.url}${path.pathname}${path.search}`);
        }
        for (const url of urls) {
          const full = await fetch(url);
          expect([full.status, full.headers.get('content-length'), full.headers.get('accept-ranges')]).toEqual([
            200,
            String(data.length),
            'bytes',
          ]);
          expect(Buffer.from(await full.arrayBuffer()).equals(data)).toBe(true);
          const part = await fetch(url, { headers: { range: 'bytes=262100-524300' } }); // across piece boundaries
          expect([part.status, part.headers.get('content-range')]).toEqual([206, `bytes 262100-524300/${data.length}`]);
          expect(Buffer.from(await part.arrayBuffer()).equals(data.subarray(262100, 524301))).toBe(true);
          const tail = await fetch(url, { headers: { range: 'bytes=-10' } });
          expect(Buffer.from(await tail.arrayBuffer()).equals(data.subarray(data.length - 10))).toBe(true);
          const bad = await fetch(url, { headers: { range: `bytes=${data.length}-` } });
          expect([bad.status, ((await bad.json()) as { code: string }).code]).toEqual([416, 'range_not_satisfiable']);
          const head = await fetch(url, { method: 'HEAD' });
          expect([head.status, head.headers.get('content-length'), head.headers.get('content-type')]).toEqual([
            200,
            String(data.length),
            'image/png',
          ]);
          expect((await head.arrayBuffer()).byteLength).toBe(0);
        }
        clock.advance(7 * DAY);
        expect((await fetch(urls.at(-1)!)).status).toBe(403);
        expect(await a.server.sweep()).toBeDefined();
        clock.advance(-7 * DAY); // the signature is valid again, but the sweep deleted the file
        await new Promise((r) => setTimeout(r, 50));
        expect((await fetch(urls.at(-1)!)).status).toBe(404);
        for (const o of others) await o[Symbol.asyncDispose]();
        await w.close();
      } finally {
        await b.done();
      }
    },
  );
});
