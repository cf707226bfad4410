// The throttle on a manual clock and a manual scheduler: exact send times, nothing waits on real time.
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { EventThrottle, type Schedule } from './event-throttle.js';
import { resolveWebhookOptions, retryDelay } from './webhook-options.js';

function manualTimers(clock: ManualClock) {
  const timers: { at: number; fn: () => void; live: boolean }[] = [];
  const schedule: Schedule = (fn, ms) => {
    const t = { at: clock.now() + ms, fn, live: true };
    timers.push(t);
    return { cancel: () => void (t.live = false) };
  };
  /** Moves the clock to `t`, running the timers due on the way, in time order. */
  const advanceTo = (t: number) => {
    for (;;) {
      const next = timers.filter((x) => x.live && x.at <= t).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      clock.set(next.at);
      next.live = false;
      next.fn();
    }
    clock.set(t);
  };
  return { schedule, advanceTo, pending: () => timers.filter((x) => x.live).length };
}

describe('EventThrottle', () => {
  const T0 = 1_700_000_000_000;

  it('sends at most one per 500 ms, holds the latest in between and always sends the last', () => {
    const clock = new ManualClock(T0);
    const timers = manualTimers(clock);
    const sent: { at: number; value: number }[] = [];
    const t = new EventThrottle<number>(
      500,
      clock,
      (_held, next) => next,
      (value) => sent.push({ at: clock.now() - T0, value }),
      timers.schedule,
    );
    // A progress value every 50 ms for 1.2 s: 25 values.
    for (let i = 0; i <= 24; i++) {
      timers.advanceTo(T0 + i * 50);
      t.push(i);
    }
    timers.advanceTo(T0 + 2_000);
    expect(sent).toEqual([
      { at: 0, value: 0 },
      { at: 500, value: 9 }, // held since 450 ms, sent when the interval ended (10 then waits)
      { at: 1000, value: 19 },
      { at: 1500, value: 24 }, // the last one, sent when its interval ended
    ]);
    expect(timers.pending()).toBe(0);
    // Quiet for longer than the interval: the next value goes at once.
    t.push(99);
    expect(sent.at(-1)).toEqual({ at: 2000, value: 99 });
  });

  it('merges held output chunks in order, and flush() sends what is held at once', () => {
    const clock = new ManualClock(T0);
    const timers = manualTimers(clock);
    const sent: string[][] = [];
    const t = new EventThrottle<string[]>(
      500,
      clock,
      (held, next) => [...(held ?? []), ...next],
      (v) => sent.push(v),
      timers.schedule,
    );
    t.push(['a']);
    timers.advanceTo(T0 + 100);
    t.push(['b', 'c']);
    timers.advanceTo(T0 + 200);
    t.push(['d']);
    t.flush(); // the job ends at 200 ms
    expect(sent).toEqual([['a'], ['b', 'c', 'd']]);
    timers.advanceTo(T0 + 5_000);
    expect(sent).toHaveLength(2); // the cancelled timer sends nothing more
    t.flush();
    expect(sent).toHaveLength(2); // nothing held: nothing sent
  });
});

describe('EventThrottle with a timer that fires early', () => {
  it('waits for the rest of the interval instead of sending early (Node timers count from the loop time)', () => {
    const T0 = 1_700_000_000_000;
    const clock = new ManualClock(T0);
    const due: (() => void)[] = [];
    const sent: number[] = [];
    const t = new EventThrottle<number>(
      500,
      clock,
      (_h, n) => n,
      () => sent.push(clock.now() - T0),
      (fn) => {
        due.push(fn);
        return { cancel: () => {} };
      },
    );
    t.push(1); // sent at 0
    clock.set(T0 + 100);
    t.push(2); // held: a timer for 400 ms
    clock.set(T0 + 488); // the timer fires 12 ms early
    due.shift()!();
    expect(sent).toEqual([0]);
    expect(due).toHaveLength(1); // rescheduled for the 12 ms left
    clock.set(T0 + 500);
    due.shift()!();
    expect(sent).toEqual([0, 500]);
  });
});

describe('webhook retry schedule', () => {
  it("defaults to RunPod's: 3 attempts (2 retries), 10 s apart", () => {
    const o = resolveWebhookOptions();
    expect(o.attempts).toBe(3);
    expect([1, 2].map((n) => retryDelay(o, n))).toEqual([10_000, 10_000]);
  });

  it('exponential with a cap, over hours', () => {
    const o = resolveWebhookOptions({
      attempts: 12,
      retryDelayMs: 10_000,
      retryBackoff: 2,
      maxRetryDelayMs: 3_600_000,
    });
    const delays = Array.from({ length: o.attempts - 1 }, (_, i) => retryDelay(o, i + 1));
    expect(delays).toEqual([
      10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_280_000, 2_560_000, 3_600_000, 3_600_000,
    ]);
    expect(delays.reduce((a, b) => a + b) / 3_600_000).toBeCloseTo(3.42, 2); // about 3.4 h from first to last attempt
  });

  it('refuses a backoff under 1 and names the option', () => {
    expect(() => resolveWebhookOptions({ retryBackoff: 0.5 })).toThrow(/webhooks\.retryBackoff must be a number >= 1/);
    expect(() => resolveWebhookOptions({ maxRetryDelayMs: -1 })).toThrow(/webhooks\.maxRetryDelayMs/);
  });
});
