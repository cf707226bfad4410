// The one-pass scan parseJsonBody runs before JSON.parse: depth and "may hold a huge number", outside strings only.
import { describe, expect, it } from 'vitest';
import { scanJson } from './body.js';

describe('scanJson', () => {
  it('counts nesting outside strings only, escaped quotes and backslashes included', () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(scanJson(deep(64), 64).tooDeep).toBe(false);
    expect(scanJson(deep(65), 64).tooDeep).toBe(true);
    const tricky = JSON.stringify({ s: `${'[{'.repeat(100)}\\"\\\\"[[[`, t: 'a\\' });
    expect(scanJson(tricky, 2)).toEqual({ tooDeep: false, hugeNumber: false });
    expect(scanJson(`{"a":"\\\\",${deep(3)}}`, 3).tooDeep).toBe(true); // the string ends at the quote after \\\\
  });

  it('flags 3-digit exponents and 309-digit runs outside strings, not inside them', () => {
    expect(scanJson('{"a":1e999}', 64).hugeNumber).toBe(true);
    expect(scanJson('{"a":1E+308}', 64).hugeNumber).toBe(true);
    expect(scanJson(`{"a":${'9'.repeat(309)}}`, 64).hugeNumber).toBe(true);
    expect(scanJson(`{"a":${'9'.repeat(308)},"b":true,"c":1e99}`, 64).hugeNumber).toBe(false);
    expect(scanJson(JSON.stringify({ image: `e123${'9'.repeat(400)}` }), 64).hugeNumber).toBe(false);
  });

  it('reads a 20 MB body with one long string and brackets after it', () => {
    const body = JSON.stringify({ input: { image: 'QUJD'.repeat(5 * 1024 * 1024), deep: [[[1e300]]] } });
    expect(scanJson(body, 64)).toEqual({ tooDeep: false, hugeNumber: true });
    expect(scanJson(body, 4).tooDeep).toBe(true);
  });
});
