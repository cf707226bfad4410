import { describe, expect, it } from 'vitest';
import { WaitTimers } from './wait-timers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('WaitTimers', () => {
  it('fires each wait once, in deadline order, never before its delay', async () => {
    const timers = new WaitTimers();
    const fired: [string, number][] = [];
    const start = performance.now();
    for (const [name, ms] of [
      ['c', 60],
      ['a', 20],
      ['b', 40],
      ['a2', 20],
    ] as const)
      timers.add(ms, () => fired.push([name, performance.now() - start]));
    expect(timers.size).toBe(4);
    await sleep(120);
    expect(fired.map(([n]) => n)).toEqual(['a', 'a2', 'b', 'c']);
    for (const [name, at] of fired) expect(at).toBeGreaterThanOrEqual(name === 'c' ? 60 : name === 'b' ? 40 : 20);
    expect(timers.size).toBe(0);
  });

  it('a cancelled wait never fires, including the earliest one (the next one still does)', async () => {
    const timers = new WaitTimers();
    const fired: string[] = [];
    const cancelEarly = timers.add(10, () => fired.push('early'));
    const cancelMid = timers.add(30, () => fired.push('mid'));
    timers.add(30, () => fired.push('mid2'));
    timers.add(50, () => fired.push('late'));
    cancelEarly();
    cancelMid();
    cancelMid(); // twice: harmless
    expect(timers.size).toBe(2);
    await sleep(90);
    expect(fired).toEqual(['mid2', 'late']);
  });

  it('a wait added from a firing callback, and one earlier than the armed timer, both fire', async () => {
    const timers = new WaitTimers();
    const fired: string[] = [];
    timers.add(60, () => fired.push('long'));
    timers.add(5, () => {
      fired.push('short');
      timers.add(5, () => fired.push('chained'));
    });
    await sleep(40);
    expect(fired).toEqual(['short', 'chained']);
    await sleep(50);
    expect(fired).toEqual(['short', 'chained', 'long']);
  });
});
