import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeJob } from '../conformance/fixtures.test-helpers.js';
import { SqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-sqlite-ckpt-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite checkpoints off the event loop (durability normal)', () => {
  it('copies committed WAL frames into the database file long before the backstop size', async () => {
    const file = join(dir, 'a.sqlite');
    const store = new SqliteStore({ file });
    try {
      const before = statSync(file).size;
      // A few hundred pages of WAL: far below the store connection's own checkpoint (WAL_BACKSTOP_PAGES).
      for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: 100 }, () => store.insert(makeJob())));
      const until = Date.now() + 5_000;
      while (statSync(file).size <= before && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      expect(statSync(file).size).toBeGreaterThan(before);
      expect(await store.queueDepth('ep')).toBe(2000);
    } finally {
      await store.close();
    }
  });

  it('leaves durability full to its own checkpoints (no thread competing with the WAL fsyncs)', async () => {
    const file = join(dir, 'b.sqlite');
    const store = new SqliteStore({ file, durability: 'full' });
    try {
      const before = statSync(file).size;
      for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: 100 }, () => store.insert(makeJob())));
      await new Promise((r) => setTimeout(r, 400));
      expect(statSync(file).size).toBe(before);
    } finally {
      await store.close();
    }
  });
});
