import { describe, expect, it } from 'vitest';
import { decide, nextWorkerId, type EndpointSnapshot, type ScalingPolicy } from './scaling.js';

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

describe('nextWorkerId', () => {
  it('reuses the lowest free number', () => {
    expect(nextWorkerId('e', [])).toBe('e-1');
    expect(nextWorkerId('e', ['e-1', 'e-3'])).toBe('e-2');
  });
});
