import { describe, expect, it } from 'vitest';
import { createLogger } from '@berth/protocol/log';
import { ScaleLoop } from './scale-loop.js';
import type { WorkerControl } from './worker-control.js';
import type { PoolWorker, WorkerPool } from './worker-pool.js';

/** A pool in memory: starts and stops are recorded; a started worker connects when the test says so. */
class MemoryPool implements WorkerPool {
  readonly cost = { tickMs: 60_000, wakeMs: 0 };
  readonly sharedByReplicas = false;
  readonly workers: PoolWorker[] = [];
  readonly stopped: string[] = [];
  #n = 0;
  async refresh(): Promise<boolean> {
    return true;
  }
  list(): PoolWorker[] {
    return this.workers;
  }
  canStart(): boolean {
    return true;
  }
  start(endpointId: string): void {
    this.workers.push({ id: `${endpointId}-${++this.#n}`, startedAt: 0 });
  }
  stop(_endpointId: string, workerId: string): void {
    this.stopped.push(workerId);
    this.workers.splice(
      this.workers.findIndex((w) => w.id === workerId),
      1,
    );
  }
}

function setup(held: () => boolean) {
  const pool = new MemoryPool();
  const lines: string[] = [];
  const expected: number[] = [];
  const connected: { workerId: string; running: number; draining: boolean }[] = [];
  let inQueue = 3;
  const workers = {
    connected: () => connected,
    setExpected: (_id: string, n: number) => void expected.push(n),
    setWaitReason: () => {},
  } as unknown as WorkerControl;
  let now = 1_000;
  const loop = new ScaleLoop({
    server: { workers, health: async () => ({ jobs: { inQueue, inProgress: 0 } }) as never },
    pool,
    endpoints: [{ id: 'ep', minWorkers: 0, maxWorkers: 2, idleTimeoutMs: 500, concurrency: 1 }],
    lease: { held: async () => held(), close: async () => {} },
    logger: createLogger({ write: (l) => void lines.push(l) }),
    now: () => now,
  });
  return {
    pool,
    lines,
    expected,
    connected,
    loop,
    setQueue: (n: number) => void (inQueue = n),
    advance: (ms: number) => void (now += ms),
  };
}

describe('ScaleLoop', () => {
  it('starts up to maxWorkers on a queue, stops idle workers after the idle timeout, tells /health each look', async () => {
    const t = setup(() => true);
    await t.loop.tick();
    expect(t.pool.workers.map((w) => w.id)).toEqual(['ep-1', 'ep-2']);
    expect(t.expected.at(-1)).toBe(2);
    t.setQueue(0);
    for (const w of t.pool.workers) t.connected.push({ workerId: w.id, running: 0, draining: false });
    await t.loop.tick(); // idle since now
    expect(t.pool.stopped).toEqual([]);
    t.advance(500);
    await t.loop.tick();
    expect(t.pool.stopped).toEqual(['ep-2', 'ep-1']); // newest first
    expect(t.expected.at(-1)).toBe(0);
    expect(t.lines.filter((l) => /scaling ep down: worker idle/.test(l))).toHaveLength(2);
  });

  it('a busy worker is not stopped, and without the scaling lease nothing is started; losing it is said once', async () => {
    let held = false;
    const t = setup(() => held);
    await t.loop.tick();
    expect(t.pool.workers).toEqual([]);
    held = true;
    await t.loop.tick();
    expect(t.pool.workers).toHaveLength(2);
    held = false;
    await t.loop.tick();
    await t.loop.tick();
    expect(t.lines.filter((l) => /scaling lease lost/.test(l))).toHaveLength(1);
  });
});
