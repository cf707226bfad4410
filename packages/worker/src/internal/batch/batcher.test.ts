import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { Job } from '../../handler.js';
import { createLogger } from '../../logger.js';
import { deferred } from '../runtime/runtime.test-helpers.js';
import { NO_SPAN } from '../execute/execute.js';
import { Batcher, type BatchTimers } from './batcher.js';

/** A clock that moves only when told, and the timers it fires. */
class ManualTimers implements BatchTimers {
  t = 0;
  private pending: { at: number; fn: () => void; live: boolean }[] = [];
  now = (): number => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const timer = { at: this.t + ms, fn, live: true };
    this.pending.push(timer);
    return { cancel: () => void (timer.live = false) };
  };
  /** Timers set and not yet fired or cancelled. */
  get armed(): number[] {
    return this.pending.filter((p) => p.live).map((p) => p.at);
  }
  advance(ms: number): void {
    this.t += ms;
    for (const p of this.pending.filter((p) => p.live && p.at <= this.t)) {
      p.live = false;
      p.fn();
    }
  }
}

function job(id: string, controller = new AbortController()): Job {
  const j = {
    id,
    input: {},
    attempt: 1,
    signal: controller.signal,
    log: createLogger({ level: 'silent' }),
    trace: NO_SPAN,
  };
  return { ...j, progress: () => undefined };
}

/** A batcher whose batches block until `release()`, recording their job ids. */
function setup(maxSize: number, maxWaitMs: number) {
  const timers = new ManualTimers();
  const batches: string[][] = [];
  let gate = deferred();
  const batcher = new Batcher(
    async (jobs) => {
      batches.push(jobs.map((j) => j.id));
      await gate.promise;
      return jobs.map((j) => j.id);
    },
    { maxSize, maxWaitMs },
    false,
    timers,
  );
  const run = (id: string, controller?: AbortController) =>
    batcher.handler(job(id, controller), job(id, controller)) as Promise<unknown>;
  const release = async () => {
    const g = gate;
    gate = deferred();
    g.resolve();
    await turn();
    await turn();
  };
  return { timers, batches, batcher, run, release };
}

describe('Batcher: when a batch starts', () => {
  it('idle: a lone job starts after the current turn, with no timer', async () => {
    const { timers, batches, run, release } = setup(8, 100);
    const out = run('a');
    expect(batches).toEqual([]); // jobs of the same turn may still join
    await turn();
    expect(batches).toEqual([['a']]);
    expect(timers.armed).toEqual([]);
    await release();
    expect(await out).toBe('a');
  });

  it('jobs of the same turn join one batch; a full batch starts at once', async () => {
    const { timers, batches, run, release } = setup(3, 100);
    const outs = ['a', 'b', 'c', 'd'].map((id) => run(id));
    expect(batches).toEqual([['a', 'b', 'c']]); // full: no turn to wait for
    await release();
    expect(timers.armed).toEqual([100]); // d queued behind a running batch: loaded, so it waits for company
    timers.advance(100);
    expect(batches).toEqual([['a', 'b', 'c'], ['d']]);
    await release();
    expect(await Promise.all(outs)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('under load, a batch waits maxWaitMs after the previous one ended for more jobs; a wait that gathers none ends the load', async () => {
    const { timers, batches, run, release } = setup(4, 10);
    void run('a');
    void run('b');
    void run('x');
    await turn();
    expect(batches).toEqual([['a', 'b', 'x']]); // idle: no wait, even for three
    timers.t = 50;
    await release(); // the batch of three marks the worker loaded
    void run('c');
    await turn();
    expect(batches).toHaveLength(1);
    expect(timers.armed).toEqual([60]); // 10 ms after c joined
    timers.advance(5);
    void run('d');
    await turn();
    expect(batches).toHaveLength(1); // two of the three the last batch held
    timers.advance(5);
    expect(batches).toEqual([
      ['a', 'b', 'x'],
      ['c', 'd'],
    ]);
    await release();
    void run('e');
    await turn();
    timers.advance(10);
    expect(batches.at(-1)).toEqual(['e']); // waited, gathered nothing more
    await release();
    void run('f');
    await turn();
    expect(batches.at(-1)).toEqual(['f']); // idle again: no wait
    expect(timers.armed).toEqual([]);
  });

  it('under load, a batch that holds as many jobs as the last one starts without waiting longer', async () => {
    const { timers, batches, run, release } = setup(8, 1000);
    void run('a');
    void run('b');
    void run('c');
    await turn();
    expect(batches).toEqual([['a', 'b', 'c']]);
    await release(); // loaded: the three clients it answered come back
    void run('d');
    void run('e');
    await turn();
    expect(batches).toHaveLength(1);
    expect(timers.armed).toEqual([1000]);
    void run('f');
    await turn();
    expect(batches.at(-1)).toEqual(['d', 'e', 'f']);
    expect(timers.armed).toEqual([]);
  });

  it('under load, a full batch does not wait', async () => {
    const { timers, batches, run, release } = setup(2, 1000);
    void run('a');
    void run('b');
    void run('c');
    await release(); // [a, b] ran; c queued behind it
    expect(batches).toEqual([['a', 'b']]);
    expect(timers.armed).toEqual([1000]);
    void run('d');
    expect(batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    expect(timers.armed).toEqual([]);
  });

  it('a job whose signal fires leaves the forming batch; its call rejects with the reason', async () => {
    const { timers, batches, run, release } = setup(4, 10);
    void run('a');
    void run('b');
    await turn();
    const ac = new AbortController();
    const cancelled = run('c', ac);
    void run('d');
    ac.abort(new Error('cancelled by the control plane (cancelled)'));
    await expect(cancelled).rejects.toThrow('cancelled by the control plane');
    await release();
    timers.advance(10);
    expect(batches).toEqual([['a', 'b'], ['d']]);
  });
});
