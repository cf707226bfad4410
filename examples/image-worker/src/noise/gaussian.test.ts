import { describe, expect, it } from 'vitest';
import { gaussianNoise, MAX_SEED } from './gaussian.js';

describe('gaussianNoise', () => {
  it('is a pure function of the seed', () => {
    expect(gaussianNoise(1025, 42)).toEqual(gaussianNoise(1025, 42));
    expect(gaussianNoise(16, 42)).not.toEqual(gaussianNoise(16, 43));
    // seeds above 2^32 are not folded onto small ones
    expect(gaussianNoise(16, 2 ** 32 + 5)).not.toEqual(gaussianNoise(16, 5));
    expect(gaussianNoise(16, MAX_SEED)).toHaveLength(16);
  });

  it('is standard normal (mean 0, variance 1, ~68% within one sigma)', () => {
    const x = gaussianNoise(200_000, 7);
    let sum = 0;
    let sq = 0;
    let within = 0;
    for (const v of x) {
      sum += v;
      sq += v * v;
      if (Math.abs(v) < 1) within++;
    }
    const mean = sum / x.length;
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(sq / x.length - mean * mean).toBeGreaterThan(0.98);
    expect(sq / x.length - mean * mean).toBeLessThan(1.02);
    expect(within / x.length).toBeCloseTo(0.6827, 2);
    expect(x.every(Number.isFinite)).toBe(true);
  });

  it('refuses bad seeds', () => {
    expect(() => gaussianNoise(4, -1)).toThrow(RangeError);
    expect(() => gaussianNoise(4, 1.5)).toThrow(RangeError);
  });
});
