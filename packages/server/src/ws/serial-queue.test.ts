import { describe, expect, it } from 'vitest';
import { SerialQueue } from './serial-queue.js';

describe('SerialQueue', () => {
  it('runs tasks in order: a synchronous task at once, an async one holding back those pushed after it', async () => {
    const errors: unknown[] = [];
    const q = new SerialQueue((err) => errors.push(err));
    const log: string[] = [];
    let release!: () => void;
    q.push(() => {
      log.push('sync 1');
    });
    expect(log).toEqual(['sync 1']); // started within push: no promise per task
    q.push(async () => {
      log.push('async start');
      await new Promise<void>((r) => (release = r));
      log.push('async end');
    });
    q.push(() => {
      log.push('sync 2');
      q.push(() => {
        log.push('pushed from a task');
      });
    });
    expect(log).toEqual(['sync 1', 'async start']);
    expect(q.idle).toBe(false);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(log).toEqual(['sync 1', 'async start', 'async end', 'sync 2', 'pushed from a task']);
    expect(q.idle).toBe(true);
    expect(errors).toEqual([]);
  });

  it('a task that throws or rejects goes to onError and the next one still runs', async () => {
    const errors: string[] = [];
    const q = new SerialQueue((err) => errors.push(String(err)));
    const log: string[] = [];
    q.push(() => {
      throw new Error('sync boom');
    });
    q.push(() => Promise.reject(new Error('async boom')));
    q.push(() => {
      log.push('after');
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(errors).toEqual(['Error: sync boom', 'Error: async boom']);
    expect(log).toEqual(['after']);
  });
});
