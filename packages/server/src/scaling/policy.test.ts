import { describe, expect, it } from 'vitest';
import { QueueWait } from './queue-wait.js';
import { decide, desiredWorkers, nextWorkerId, type EndpointSnapshot, type ScalingPolicy } from './policy.js';

const policy: ScalingPolicy = { minWorkers: 0, maxWorkers: 3, idleTimeoutMs: 1000, concurrency: 2 };

function snap(over: Partial<EndpointSnapshot>): EndpointSnapshot {
  return { inQueue: 0, inProgress: 0, workers: [], running: new Map(), idleSince: new Map(), ...over };
}

describe('decide', () => {
  it('scales from zero on the first queued job', () => {
    expect(decide(policy, snap({ inQueue: 1 }), 0)).toEqual({ start: 1, stop: [] });
  });

  it('starts enough workers for queued plus running jobs at `concurrency` each, up to maxWorkers', () => {
    expect(decide(policy, snap({ inQueue: 3, inProgress: 2, workers: ['e-1'] }), 0)).toEqual({ start: 2, stop: [] });
    expect(decide(policy, snap({ inQueue: 50, workers: ['e-1'] }), 0)).toEqual({ start: 2, stop: [] });
  });

  it('keeps minWorkers with no jobs at all', () => {
    expect(decide({ ...policy, minWorkers: 2 }, snap({}), 0)).toEqual({ start: 2, stop: [] });
  });

  it('stops idle workers after idleTimeoutMs, newest first, down to minWorkers', () => {
    const s = snap({
      workers: ['e-1', 'e-2', 'e-3'],
      running: new Map([
        ['e-1', 0],
        ['e-2', 0],
        ['e-3', 0],
      ]),
      idleSince: new Map([
        ['e-1', 0],
        ['e-2', 0],
        ['e-3', 500],
      ]),
    });
    expect(decide({ ...policy, minWorkers: 1 }, s, 1000)).toEqual({ start: 0, stop: ['e-2', 'e-1'] });
    expect(decide({ ...policy, minWorkers: 1 }, s, 1500)).toEqual({ start: 0, stop: ['e-3', 'e-2'] });
    expect(decide(policy, s, 1500)).toEqual({ start: 0, stop: ['e-3', 'e-2', 'e-1'] });
  });

  it('never stops a busy worker, one still connecting, or any while jobs wait', () => {
    const s = snap({ workers: ['e-1', 'e-2'], running: new Map([['e-1', 1]]), idleSince: new Map() });
    expect(decide(policy, s, 10_000)).toEqual({ start: 0, stop: [] });
    const idle = snap({
      inQueue: 1,
      workers: ['e-1', 'e-2'],
      running: new Map([
        ['e-1', 0],
        ['e-2', 0],
      ]),
      idleSince: new Map([
        ['e-1', 0],
        ['e-2', 0],
      ]),
    });
    expect(decide(policy, idle, 10_000)).toEqual({ start: 0, stop: [] });
  });

  it('a fixed endpoint (min = max) neither grows nor shrinks', () => {
    const fixed = { ...policy, minWorkers: 1, maxWorkers: 1 };
    expect(decide(fixed, snap({ inQueue: 9, workers: ['e-1'] }), 0)).toEqual({ start: 0, stop: [] });
    expect(
      decide(fixed, snap({ workers: ['e-1'], running: new Map([['e-1', 0]]), idleSince: new Map([['e-1', 0]]) }), 1e9),
    ).toEqual({ start: 0, stop: [] });
  });
});

describe('scaler types', () => {
  const base: ScalingPolicy = { minWorkers: 0, maxWorkers: 8, idleTimeoutMs: 1000, concurrency: 1 };
  const connected = (ids: string[], busy: number) =>
    new Map(ids.map((id, i) => [id, i < busy ? 1 : 0] as [string, number]));

  it('request-count: ceil((queued + running) / jobsPerWorker), whatever the concurrency', () => {
    const p: ScalingPolicy = { ...base, scaler: { type: 'request-count', jobsPerWorker: 4 } };
    expect(desiredWorkers(p, snap({ inQueue: 9 }))).toBe(3);
    expect(desiredWorkers(p, snap({ inQueue: 3, inProgress: 5 }))).toBe(2);
    expect(desiredWorkers(p, snap({ inQueue: 100 }))).toBe(8);
    expect(desiredWorkers(p, snap({}))).toBe(0);
  });

  it('queue-delay: one worker at once from zero, then one more only once jobs waited longer than `seconds`', () => {
    const p: ScalingPolicy = { ...base, scaler: { type: 'queue-delay', seconds: 4 } };
    expect(decide(p, snap({ inQueue: 50, queuedForMs: 0 }), 0)).toEqual({ start: 1, stop: [] });
    const one = { workers: ['e-1'], running: connected(['e-1'], 1), idleSince: new Map() };
    expect(decide(p, snap({ inQueue: 50, inProgress: 1, queuedForMs: 3999, ...one }), 0)).toEqual({
      start: 0,
      stop: [],
    });
    expect(decide(p, snap({ inQueue: 50, inProgress: 1, queuedForMs: 4000, ...one }), 0)).toEqual({
      start: 1,
      stop: [],
    });
  });

  it('queue-delay: not while a worker is still starting (it may take the jobs)', () => {
    const p: ScalingPolicy = { ...base, scaler: { type: 'queue-delay', seconds: 1 } };
    const s = snap({ inQueue: 5, inProgress: 1, queuedForMs: 60_000, workers: ['e-1', 'e-2'] });
    expect(decide(p, { ...s, running: connected(['e-1'], 1) }, 0)).toEqual({ start: 0, stop: [] });
    expect(decide(p, { ...s, running: connected(['e-1', 'e-2'], 2) }, 0)).toEqual({ start: 1, stop: [] });
  });

  it('queue-delay: idle workers go once the queue is empty, down to the busy ones', () => {
    const p: ScalingPolicy = { ...base, scaler: { type: 'queue-delay', seconds: 1 } };
    const ids = ['e-1', 'e-2', 'e-3'];
    const s = snap({
      inProgress: 1,
      workers: ids,
      running: connected(ids, 1),
      idleSince: new Map([
        ['e-2', 0],
        ['e-3', 0],
      ]),
    });
    expect(decide(p, s, 1000)).toEqual({ start: 0, stop: ['e-3', 'e-2'] });
  });

  it('bufferWorkers: warm spares above demand while there are jobs, none at zero demand', () => {
    const p: ScalingPolicy = { ...base, maxWorkers: 4, bufferWorkers: 2 };
    expect(desiredWorkers(p, snap({ inQueue: 1 }))).toBe(3);
    expect(desiredWorkers(p, snap({ inQueue: 3 }))).toBe(4);
    expect(desiredWorkers(p, snap({}))).toBe(0);
    expect(desiredWorkers({ ...p, minWorkers: 1 }, snap({}))).toBe(1);
    // A spare idle past the timeout is kept while a job runs.
    const ids = ['e-1', 'e-2', 'e-3'];
    const busy = snap({ inProgress: 1, workers: ids, running: connected(ids, 1), idleSince: new Map([['e-3', 0]]) });
    expect(decide(p, busy, 10_000)).toEqual({ start: 0, stop: [] });
  });

  it('queue-delay with a buffer does not grow tick after tick', () => {
    const p: ScalingPolicy = { ...base, bufferWorkers: 1, scaler: { type: 'queue-delay', seconds: 10 } };
    const ids = ['e-1', 'e-2'];
    const s = snap({ inQueue: 3, inProgress: 1, queuedForMs: 0, workers: ids, running: connected(ids, 1) });
    expect(decide(p, s, 0)).toEqual({ start: 0, stop: [] });
  });
});

describe('nextWorkerId', () => {
  it('reuses the lowest free number', () => {
    expect(nextWorkerId('e', [])).toBe('e-1');
    expect(nextWorkerId('e', ['e-1', 'e-3'])).toBe('e-2');
  });
});

describe('QueueWait', () => {
  it('counts from the first look that saw jobs, and restarts once the queue was seen empty', () => {
    const w = new QueueWait();
    expect(w.observe('e', 0, 0)).toBeUndefined();
    expect(w.observe('e', 2, 100)).toBe(0);
    expect(w.observe('e', 5, 4100)).toBe(4000);
    expect(w.observe('other', 1, 4100)).toBe(0);
    expect(w.observe('e', 0, 4200)).toBeUndefined();
    expect(w.observe('e', 1, 5000)).toBe(0);
  });
});
