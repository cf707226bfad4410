import { describe, expect, it } from 'vitest';
import { armWaiter, JobEvents } from '../jobs/job-events.js';
import { ClientGone } from './client-gone.js';

describe('ClientGone', () => {
  it('fires each listener once, the same listener only once, not removed ones, nothing after the fact', () => {
    const gone = new ClientGone();
    const calls: string[] = [];
    const a = () => calls.push('a');
    const b = () => calls.push('b');
    gone.addEventListener('abort', a);
    gone.addEventListener('abort', a);
    gone.addEventListener('abort', b);
    gone.removeEventListener('abort', b);
    expect(gone.aborted).toBe(false);
    gone.abort();
    gone.abort();
    gone.addEventListener('abort', b);
    expect(gone.aborted).toBe(true);
    expect(calls).toEqual(['a']);
  });

  it('ends a job waiter as an AbortSignal does, and leaves no listener behind when the wait ends first', async () => {
    const events = new JobEvents();
    const gone = new ClientGone();
    const waiter = armWaiter(events, 'j1');
    const pending = waiter.wait(60_000, gone);
    gone.abort();
    await expect(pending).resolves.toBe('aborted');
    await expect(waiter.wait(60_000, gone)).resolves.toBe('aborted');
    waiter.dispose();

    const other = new ClientGone();
    const w2 = armWaiter(events, 'j2');
    const p2 = w2.wait(60_000, other);
    events.emit('j2', 'change');
    await expect(p2).resolves.toBe('change');
    expect((other as unknown as { listeners?: unknown[] }).listeners).toEqual([]);
    w2.dispose();
  });
});
