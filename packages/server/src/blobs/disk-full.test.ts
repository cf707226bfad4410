import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { API_KEY, listening, ScriptedWorker, until } from '../testing.test-helpers.js';

/** A 24 MiB tmpfs as the data folder (root only: skipped with the reason where it cannot be mounted). */
const mnt = mkdtempSync(join(tmpdir(), 'berth-full-'));
let mounted = false;
let why = '';
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mnt], { stdio: 'pipe' });
  mounted = true;
} catch (err) {
  why = `cannot mount a tmpfs here (${String((err as Error).message).split('\n')[0]})`;
}
afterAll(() => {
  if (mounted) execFileSync('umount', ['-l', mnt]);
  rmSync(mnt, { recursive: true, force: true });
});

/** Fills the filesystem with one file until ENOSPC; answers its path (delete it to give the space back). */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(fd, block);
  } catch {
    // ENOSPC: full
  } finally {
    closeSync(fd);
  }
  return path;
}

describe.skipIf(!mounted)(`a disk that fills while jobs run (SQLite on a 24 MiB tmpfs) ${why}`, () => {
  beforeAll(() => undefined);

  it('submits get 507, a worker result is not acknowledged until it can be stored, and nothing acknowledged is lost', async () => {
    const folder = join(mnt, 'data');
    await using t = await listening({ store: new SqliteStore({ file: join(folder, 'berth.sqlite') }) });
    const post = (body: string) =>
      fetch(`${t.url}/v2/echo/run`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body,
      });
    const small = `{"input":{"text":"${'x'.repeat(200 * 1024)}"}}`;
    const big = `{"input":{"text":"${'y'.repeat(1024 * 1024)}"}}`;
    // Two jobs accepted while there is space: one will be running when the disk fills, one queued.
    const accepted: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await post(small);
      expect(r.status).toBe(200);
      accepted.push(((await r.json()) as { id: string }).id);
    }
    const w = await ScriptedWorker.connect(t.url, { blobs: true });
    const a = await w.next('job.assign');
    const filler = fill(mnt);
    // Full: a small submit (the row) and a big one (the blob file) are both refused with 507, never 500.
    const codes = new Set<number>();
    for (const body of [small, big, small]) {
      const r = await post(body);
      codes.add(r.status);
      if (r.status === 200) accepted.push(((await r.json()) as { id: string }).id);
      else expect(((await r.json()) as { code: string }).code).toBe('insufficient_storage');
    }
    expect(codes.has(507)).toBe(true);
    expect(codes.has(500)).toBe(false);
    // The running job's result cannot be stored: no ack, and the connection is closed for a resend.
    const output = { text: 'z'.repeat(300 * 1024) };
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output });
    await until(() => w.closed || undefined, 5000, 'the server to close the worker connection');
    expect(w.count('job.ack')).toBe(0);
    // Space returns: the worker reconnects holding its result, sends it again, and it is stored.
    unlinkSync(filler);
    const w2 = await ScriptedWorker.connect(t.url, { blobs: true, inflight: [{ id: a.id, attempt: a.attempt }] });
    const welcome = await w2.next('welcome');
    expect(welcome.stale).toEqual([]);
    w2.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output });
    await w2.next('job.ack');
    // Every acknowledged job reaches a final state: the worker runs the rest.
    for (;;) {
      const done = await Promise.all(
        accepted.map(async (id) => {
          const r = await fetch(`${t.url}/v2/echo/status/${id}`, { headers: { authorization: `Bearer ${API_KEY}` } });
          return ((await r.json()) as { status: string }).status;
        }),
      );
      if (done.every((s) => s === 'COMPLETED')) break;
      const next = await w2.next('job.assign', 5000);
      w2.send({ type: 'job.complete', id: next.id, attempt: next.attempt, output: { ok: true } });
      await w2.next('job.ack');
    }
    await w2.close();
  });
});
