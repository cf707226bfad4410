import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileWatcher } from './watcher.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-watch-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('FileWatcher', () => {
  it('reports changes to watched files once per burst, and ignores other files in the folder', async () => {
    const a = join(tmp, 'a.ts');
    const b = join(tmp, 'b.ts');
    writeFileSync(a, '1');
    writeFileSync(b, '1');
    const calls: string[][] = [];
    const w = new FileWatcher((files) => calls.push(files), { debounceMs: 50 });
    w.update([a]);
    try {
      writeFileSync(b, '2');
      writeFileSync(a, '2');
      writeFileSync(a, '3');
      const end = Date.now() + 5_000;
      while (calls.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
      expect(calls).toEqual([[a]]);
    } finally {
      w.close();
    }
  });

  /** Waits until `calls` has an entry (at most 5 s), then a little longer for a second, unwanted one. */
  async function settle(calls: string[][]): Promise<void> {
    const end = Date.now() + 5_000;
    while (calls.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 250));
  }

  it('poll mode (--watch-poll): changes found by comparing stats, without fs.watch; a deleted file counts', async () => {
    const a = join(tmp, 'poll-a.ts');
    const b = join(tmp, 'poll-b.ts');
    writeFileSync(a, '1');
    writeFileSync(b, '1');
    const calls: string[][] = [];
    let watched = 0;
    const w = new FileWatcher((files) => calls.push(files), {
      mode: 'poll',
      pollMs: 40,
      debounceMs: 30,
      watch: () => {
        watched++;
        throw new Error('poll mode must not open a watcher');
      },
    });
    w.update([a]);
    try {
      writeFileSync(b, '22');
      writeFileSync(a, '22');
      await settle(calls);
      expect(calls).toEqual([[a]]);
      rmSync(a);
      calls.length = 0;
      await settle(calls);
      expect(calls).toEqual([[a]]);
      expect(watched).toBe(0);
    } finally {
      w.close();
    }
  });

  it('auto mode: a folder whose fs.watch throws, or gives no events (a mount without them), is caught by the stat poll', async () => {
    for (const broken of ['throws', 'silent'] as const) {
      const a = join(tmp, `auto-${broken}.ts`);
      writeFileSync(a, '1');
      const calls: string[][] = [];
      const w = new FileWatcher((files) => calls.push(files), {
        pollMs: 40,
        debounceMs: 30,
        watch: () => {
          if (broken === 'throws')
            throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), {
              code: 'ENOSPC',
            });
          return Object.assign(new EventEmitter(), { close() {} }) as unknown as FSWatcher; // never emits
        },
      });
      w.update([a]);
      try {
        writeFileSync(a, '22');
        await settle(calls);
        expect([broken, calls]).toEqual([broken, [[a]]]);
      } finally {
        w.close();
      }
    }
  });

  it('auto mode with working file events: one write is reported once, not again by the poll', async () => {
    const a = join(tmp, 'auto-once.ts');
    writeFileSync(a, '1');
    const calls: string[][] = [];
    const w = new FileWatcher((files) => calls.push(files), { pollMs: 40, debounceMs: 30 });
    w.update([a]);
    try {
      writeFileSync(a, '22');
      await settle(calls);
      await new Promise((r) => setTimeout(r, 200)); // several polls
      expect(calls).toEqual([[a]]);
    } finally {
      w.close();
    }
  });
});
