// Big inputs are kept out of the job row (schema migration 5): the row holds '', `job_inputs` the JSON, and
// deleting the job deletes it; small inputs stay in the row. Checked on the real database file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makeJob, must, RETENTION, T0 } from '../conformance/fixtures.test-helpers.js';
import { BIG_INPUT_CHARS } from './big-inputs.js';
import { SqliteStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-big-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite big inputs', () => {
  it('keeps a big input aside, a small one in the row, and drops the big one with its job', async () => {
    const file = join(dir, 'big.sqlite');
    const store = new SqliteStore({ file });
    const big = makeJob({ input: { image: 'x'.repeat(BIG_INPUT_CHARS) } });
    const small = makeJob({ input: { n: 1 } });
    await store.insert(big);
    await store.insert(small);
    const peek = new BetterSqlite3(file, { readonly: true });
    try {
      const col = peek.prepare('SELECT input FROM jobs WHERE id = ?').pluck();
      expect(col.get(big.id)).toBe('');
      expect(col.get(small.id)).toBe('{"n":1}');
      const aside = peek.prepare('SELECT length(data) FROM job_inputs WHERE job_id = ?').pluck();
      expect(aside.get(big.id)).toBe(JSON.stringify(big.input).length);
      expect(aside.get(small.id)).toBeUndefined();
      const claimed = must(await store.claim('ep', 'w1', T0 + 1));
      expect(claimed.input).toEqual(big.input);
      const done = must(await store.finish(big.id, 1, { status: 'COMPLETED', output: { ok: 1 } }, T0 + 2, RETENTION));
      expect(done.output).toEqual({ ok: 1 });
      expect(col.get(big.id)).toBe(''); // the claim and the finish did not move it back into the row
      expect(await store.delete(big.id)).toBe(true);
      expect(aside.get(big.id)).toBeUndefined();
      expect(peek.pragma('user_version', { simple: true })).toBe(6);
    } finally {
      peek.close();
      await store.close();
    }
  });
});
