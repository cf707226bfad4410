import { describe, expect, it } from 'vitest';
import { LazyAbort, signalOf } from './lazy-abort.js';

describe('LazyAbort', () => {
  it('a signal made before abort() fires its abort event once, with the reason', () => {
    const a = new LazyAbort();
    const signal = a.signal;
    const seen: unknown[] = [];
    signal.addEventListener('abort', () => seen.push(signal.reason));
    const why = new Error('cancelled');
    a.abort(why);
    a.abort(new Error('again'));
    expect([a.aborted, a.reason, signal.aborted, seen]).toEqual([true, why, true, [why]]);
    expect(a.signal).toBe(signal);
  });

  it('without a signal, aborted and reason answer; a signal made afterwards is already aborted', () => {
    const a = new LazyAbort();
    expect([a.aborted, a.reason]).toEqual([false, undefined]);
    const why = new Error('stopped');
    a.abort(why);
    expect([a.aborted, a.reason]).toEqual([true, why]);
    expect([signalOf(a).aborted, signalOf(a).reason]).toEqual([true, why]);
    const real = new AbortController().signal;
    expect(signalOf(real)).toBe(real);
  });
});
