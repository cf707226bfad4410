import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineAlarm } from './deadline-alarm.js';
import { ScriptedWorker, call, listening, untilStatus } from '../testing.test-helpers.js';

describe('DeadlineAlarm', () => {
  afterEach(() => vi.useRealTimers());

  it('fires once at the earliest armed deadline; later ones do not re-arm it', () => {
    vi.useFakeTimers({ now: 1000 });
    const fired: number[] = [];
    const alarm = new DeadlineAlarm(
      () => Date.now(),
      () => fired.push(Date.now()),
    );
    alarm.at(5000);
    alarm.at(9000); // later: ignored while 5000 is pending
    alarm.at(3000); // earlier: re-armed
    vi.advanceTimersByTime(1999);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(2);
    expect(fired).toEqual([3001]);
    vi.advanceTimersByTime(10_000);
    expect(fired).toHaveLength(1); // one timer, not one per deadline
    alarm.at(20_000);
    alarm.stop();
    vi.advanceTimersByTime(20_000);
    expect(fired).toHaveLength(1);
  });

  it('a past deadline fires at once', () => {
    vi.useFakeTimers({ now: 1000 });
    let n = 0;
    new DeadlineAlarm(
      () => Date.now(),
      () => n++,
    ).at(10);
    vi.advanceTimersByTime(1);
    expect(n).toBe(1);
  });
});

describe('deadlines fire on time, not at the next periodic sweep', () => {
  it('executionTimeout turns the job TIMED_OUT at 5 s even with a 60 s sweep interval', async () => {
    await using t = await listening({ sweepIntervalMs: 60_000 });
    const w = await ScriptedWorker.connect(t.url);
    const id = (
      await call(t.server, 'POST', '/v2/echo/run', { body: { input: {}, policy: { executionTimeout: 5000 } } })
    ).body.id;
    await w.next('job.assign');
    await w.next('job.cancel', 8000);
    const s = await untilStatus(t.server, 'echo', id, 'TIMED_OUT');
    expect(s.executionTime).toBeGreaterThanOrEqual(5000);
    await w.close();
  }, 15_000);
});
