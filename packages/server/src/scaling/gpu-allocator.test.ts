import { describe, expect, it } from 'vitest';
import { createLogger } from '@berth/protocol/log';
import { GpuAllocator } from './gpu-allocator.js';
import { ScaleLoop, type ScaledPolicy } from './scale-loop.js';
import type { WorkerControl } from './worker-control.js';
import type { PoolWorker, WorkerPool } from './worker-pool.js';
import type { ScalerWaitReason } from '../workers/worker-registry.js';

/**
 * A pool in memory that places GPUs as the CLI's pools do: a start takes the worker's devices from the allocator
 * (and is refused without them), a stop leaves the list at once but the devices stay held until the test says the
 * worker has exited (a container draining still uses its GPU).
 */
class GpuPool implements WorkerPool {
  readonly cost = { tickMs: 60_000, wakeMs: 0 };
  readonly sharedByReplicas = false;
  readonly workers = new Map<string, PoolWorker[]>();
  /** Stopped, not yet exited: still holding devices. */
  readonly draining: string[] = [];
  readonly refused: string[] = [];
  refreshes = 0;
  #n = 0;
  constructor(
    readonly gpus: GpuAllocator,
    readonly per: Record<string, number>,
  ) {}
  async refresh(): Promise<boolean> {
    this.refreshes++;
    return true;
  }
  list(endpointId: string): PoolWorker[] {
    return this.workers.get(endpointId) ?? [];
  }
  canStart(): boolean {
    return true;
  }
  start(endpointId: string): void {
    const id = `${endpointId}-${++this.#n}`;
    if (!this.gpus.take(endpointId, id, this.per[endpointId] ?? 0)) return void this.refused.push(id);
    this.workers.set(endpointId, [...this.list(endpointId), { id, startedAt: 0 }]);
  }
  stop(endpointId: string, workerId: string): void {
    this.workers.set(
      endpointId,
      this.list(endpointId).filter((w) => w.id !== workerId),
    );
    this.draining.push(workerId);
  }
  /** The stopped workers have exited: their devices are free. */
  exitAll(): void {
    for (const id of this.draining.splice(0)) this.gpus.release(id);
  }
}

const policy = (id: string, gpusPerWorker: number): ScaledPolicy => ({
  id,
  minWorkers: 0,
  maxWorkers: 4,
  idleTimeoutMs: 100,
  concurrency: 1,
  gpusPerWorker,
});

/** Two endpoints on one 4-GPU box: `a` needs 2 GPUs per worker, `b` 1; queues and connected workers set by the test. */
function box() {
  const reasons: string[] = [];
  /** The wait reason each endpoint was last given. */
  const reason: Record<string, string> = {};
  const held: Record<string, { workerId: string; devices: readonly string[] }[]> = {};
  const queue: Record<string, number> = { a: 0, b: 0 };
  const connected: Record<string, { workerId: string; running: number; draining: boolean }[]> = { a: [], b: [] };
  const workers = {
    connected: (ep: string) => connected[ep] ?? [],
    setExpected: () => {},
    setWaitReason: (ep: string, r: ScalerWaitReason | undefined) => {
      reasons.push(`${ep} ${r ?? '-'}`);
      reason[ep] = r ?? '-';
    },
    setGpus: (ep: string, h: { workerId: string; devices: readonly string[] }[]) => void (held[ep] = h),
  } as unknown as WorkerControl;
  const gpus = new GpuAllocator(['0', '1', '2', '3'], (ep) => workers.setGpus(ep, gpus.holdings(ep)));
  const pool = new GpuPool(gpus, { a: 2, b: 1 });
  const lines: string[] = [];
  let now = 1_000;
  const loop = new ScaleLoop({
    server: { workers, health: async (ep) => ({ jobs: { inQueue: queue[ep] ?? 0, inProgress: 0 } }) as never },
    pool,
    gpus,
    endpoints: [policy('a', 2), policy('b', 1)],
    logger: createLogger({ write: (l) => void lines.push(l) }),
    now: () => now,
  });
  /** Every worker of the pool is connected and idle (idle since the next look). */
  const connectAll = () => {
    for (const ep of ['a', 'b'])
      connected[ep] = pool.list(ep).map((w) => ({ workerId: w.id, running: 0, draining: false }));
  };
  /** No device held by two workers, and every started worker holds its own. */
  const checkDisjoint = () => {
    const owners = new Map<string, string>();
    for (const h of gpus.holdings()) {
      for (const d of h.devices) {
        expect(owners.get(d), `device ${d} held by ${owners.get(d)} and ${h.workerId}`).toBeUndefined();
        owners.set(d, h.workerId);
      }
    }
    for (const ep of ['a', 'b'])
      for (const w of pool.list(ep)) expect(gpus.heldBy(w.id)).toHaveLength(ep === 'a' ? 2 : 1);
  };
  return {
    gpus,
    pool,
    loop,
    reasons,
    reason,
    held,
    lines,
    queue,
    connected,
    connectAll,
    checkDisjoint,
    advance: (ms: number) => void (now += ms),
  };
}

describe('GpuAllocator', () => {
  it('hands out disjoint devices, refuses what is not free, reuses what is released, and claims found ones', () => {
    const g = new GpuAllocator(['0', '1', '2', '3']);
    expect(g.take('a', 'a-1', 2)).toEqual(['0', '1']);
    expect(g.take('b', 'b-1', 1)).toEqual(['2']);
    expect(g.take('a', 'a-2', 2)).toBeUndefined(); // one free: nothing taken
    expect(g.freeCount()).toBe(1);
    expect(g.take('a', 'a-1', 2)).toEqual(['0', '1']); // a worker keeps what it holds
    g.release('a-1');
    expect(g.take('a', 'a-2', 2)).toEqual(['0', '1']);
    expect(g.claim('b', 'b-9', ['3', '0', '7'])).toEqual(['0', '7']); // 0 is a-2's, 7 is not on the box
    expect(g.holdings()).toEqual([
      { workerId: 'a-2', devices: ['0', '1'] },
      { workerId: 'b-1', devices: ['2'] },
      { workerId: 'b-9', devices: ['3'] },
    ]);
    expect(g.holdings('b').map((h) => h.workerId)).toEqual(['b-1', 'b-9']);
    expect(() => new GpuAllocator(['0', '0'])).toThrow(/listed twice/);
  });
});

describe('ScaleLoop placing GPUs', () => {
  it('two endpoints on 4 GPUs, scale-ups and downs interleaved: never two workers on one device, freed devices reused, a worker short of GPUs waits and says so', async () => {
    const t = box();
    // a wants 4 workers (8 GPUs): it gets 2 (4 GPUs); b gets none and waits.
    t.queue['a'] = 4;
    t.queue['b'] = 2;
    await t.loop.tick();
    t.checkDisjoint();
    expect(t.pool.list('a').map((w) => w.id)).toEqual(['a-1', 'a-2']);
    expect(t.pool.list('b')).toEqual([]);
    expect(t.pool.refused).toEqual([]); // the loop never asks for a worker whose GPUs are not free
    expect(t.reasons).toEqual(['a gpu', 'b gpu']);
    expect(t.held['a']).toEqual([
      { workerId: 'a-1', devices: ['0', '1'] },
      { workerId: 'a-2', devices: ['2', '3'] },
    ]);
    expect(t.lines.filter((l) => /endpoint b waits for a GPU/.test(l))).toHaveLength(1);
    expect(t.lines.find((l) => /endpoint b waits for a GPU/.test(l))).toMatch(
      /0 of 4 free \(held: 0 a-1, 1 a-1, 2 a-2, 3 a-2\)/,
    );
    await t.loop.tick(); // still short: said once
    expect(t.lines.filter((l) => /endpoint b waits for a GPU/.test(l))).toHaveLength(1);

    // a's queue drains: its workers go idle and are stopped; their GPUs stay held until they have exited.
    t.queue['a'] = 0;
    t.connectAll();
    await t.loop.tick();
    t.advance(100);
    await t.loop.tick();
    expect(t.pool.list('a')).toEqual([]);
    expect(t.pool.list('b')).toEqual([]); // a's workers are draining on all four devices
    expect(t.reason).toEqual({ a: '-', b: 'gpu' });
    t.pool.exitAll();
    expect(t.held['a']).toEqual([]);
    await t.loop.tick();
    t.checkDisjoint();
    // b gets two workers on the freed devices; a no longer waits.
    expect(t.pool.list('b').map((w) => [w.id, t.gpus.heldBy(w.id)])).toEqual([
      ['b-3', ['0']],
      ['b-4', ['1']],
    ]);
    expect(t.reason).toEqual({ a: '-', b: '-' });

    // a is queued again: one worker fits (2, 3); b asks for two more and waits; then b scales down and a grows.
    t.queue['a'] = 2;
    t.queue['b'] = 4;
    await t.loop.tick();
    t.checkDisjoint();
    expect(t.pool.list('a').map((w) => [w.id, t.gpus.heldBy(w.id)])).toEqual([['a-5', ['2', '3']]]);
    expect(t.pool.list('b')).toHaveLength(2);
    expect(t.reason).toEqual({ a: 'gpu', b: 'gpu' });
    t.queue['b'] = 0;
    t.connectAll();
    t.connected['a'] = t.connected['a']!.map((w) => ({ ...w, running: 1 }));
    await t.loop.tick();
    t.advance(100);
    await t.loop.tick();
    t.pool.exitAll();
    await t.loop.tick();
    t.checkDisjoint();
    expect(t.pool.list('a').map((w) => [w.id, t.gpus.heldBy(w.id)])).toEqual([
      ['a-5', ['2', '3']],
      ['a-6', ['0', '1']],
    ]);
    expect(t.pool.list('b')).toEqual([]);
    expect(t.reason).toEqual({ a: '-', b: '-' });
    expect(t.pool.refused).toEqual([]);
  });

  it('an endpoint at zero waiting for GPUs does not make the wake look again and again (only the ticks do)', async () => {
    const gpus = new GpuAllocator(['0']);
    gpus.take('a', 'a-9', 1); // held by a worker this loop does not see
    const pool = new GpuPool(gpus, { a: 1 });
    const workers = {
      connected: () => [],
      setExpected: () => {},
      setWaitReason: () => {},
    } as unknown as WorkerControl;
    const loop = new ScaleLoop({
      server: { workers, health: async () => ({ jobs: { inQueue: 1, inProgress: 0 } }) as never },
      pool,
      gpus,
      endpoints: [policy('a', 1)],
      logger: createLogger({ write: () => {} }),
      tickMs: 60_000,
      wakeMs: 10,
    });
    loop.start();
    try {
      await new Promise((r) => setTimeout(r, 300));
      expect(pool.refreshes).toBe(1); // the first look only
      expect(pool.list('a')).toEqual([]);
    } finally {
      await loop.stop();
    }
  });

  it('refuses an endpoint that needs GPUs when the loop has none', () => {
    const workers = {} as WorkerControl;
    expect(
      () =>
        new ScaleLoop({
          server: { workers, health: async () => ({}) as never },
          pool: new GpuPool(new GpuAllocator([]), {}),
          endpoints: [policy('a', 1)],
          logger: createLogger({ write: () => {} }),
        }),
    ).toThrow(/needs 1 GPU\(s\) per worker/);
  });
});
