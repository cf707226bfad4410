import { describe, expect, it } from 'vitest';
import { UnrecoverableError } from '../../errors.js';
import { errorMessage } from './error-message.js';

describe('errorMessage', () => {
  it.each([
    [new Error('plain'), 'plain'],
    [new RangeError('too big'), 'RangeError: too big'],
    [new UnrecoverableError('give up'), 'give up'],
    [new Error(''), 'Error'],
    ['a string', 'a string'],
    [42, '42'],
    [{ reason: 'x' }, '{"reason":"x"}'],
    [undefined, 'undefined'],
  ])('%o -> %s', (err, expected) => {
    expect(errorMessage(err)).toBe(expected);
  });

  it('falls back to String() when JSON fails, and cuts very long messages', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(errorMessage(cyclic)).toBe('[object Object]');
    expect(errorMessage('x'.repeat(100_000)).length).toBeLessThan(17_000);
  });
});
