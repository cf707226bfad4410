// The Monitor view's pure helpers (packages/server/playground/chart.js), run in Node. The view itself is tested in
// Chromium by packages/cli/src/e2e/playground-monitor.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import { PLAYGROUND_DIR } from './static.js';

let chart: any;
beforeAll(async () => {
  chart = await import(/* @vite-ignore */ `${PLAYGROUND_DIR}chart.js`);
});

describe('chart.js', () => {
  it('niceCeil picks the axis top: 1, 2, 2.5, 5 x 10^n, never under the floor', () => {
    expect([0, 0.3, 1, 1.2, 2.2, 3, 7, 12, 260, 4900].map((v) => chart.niceCeil(v))).toEqual([
      1, 1, 1, 2, 2.5, 5, 10, 20, 500, 5000,
    ]);
    expect(chart.niceCeil(4, 10)).toBe(10);
  });

  it('formats durations and numbers for the legends', () => {
    expect([null, 3.4, 999, 1234, 12_345, 90_000].map(chart.formatMs)).toEqual([
      '–',
      '3 ms',
      '999 ms',
      '1.23 s',
      '12.3 s',
      '1.5 min',
    ]);
    expect([null, 0, 0.333, 12.5, 1234.5].map(chart.formatNumber)).toEqual(['–', '0', '0.33', '12.5', '1235']);
  });

  it('ratePerSecond divides each slot by its length, the partial last slot by the time elapsed (at least 1 s)', () => {
    const t = [0, 5000, 10_000];
    expect(chart.ratePerSecond([null, 10, 6], t, 5000, 12_000)).toEqual([null, 2, 3]);
    expect(chart.ratePerSecond([0, 10, 4], t, 5000, 10_200)).toEqual([0, 2, 4]); // 200 ms in: counted as 1 s
    expect(chart.lastValue([1, 2, null])).toBe(2);
    expect(chart.lastValue([null])).toBeNull();
  });
});
