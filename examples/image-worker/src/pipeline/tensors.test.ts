import { describe, expect, it } from 'vitest';
import { fromHalf, toFloat32, toHalf, toTensor } from './tensors.js';

describe('float16 conversion', () => {
  it('encodes known values exactly', () => {
    expect(toHalf(1)).toBe(0x3c00);
    expect(toHalf(-2)).toBe(0xc000);
    expect(toHalf(0.5)).toBe(0x3800);
    expect(toHalf(65504)).toBe(0x7bff);
    expect(toHalf(1e6)).toBe(0x7c00); // overflow -> infinity
    expect(toHalf(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(toHalf(0)).toBe(0);
    expect(fromHalf(0x3555)).toBeCloseTo(0.33325, 5);
    expect(Number.isNaN(fromHalf(toHalf(NaN)))).toBe(true);
  });

  it('round-trips within half precision', () => {
    for (const v of [0.1, -Math.PI, 123.456, 1e-4, -0.0007, 14.6146]) {
      expect(Math.abs(fromHalf(toHalf(v)) - v) / Math.abs(v)).toBeLessThan(1e-3);
    }
  });
});

describe('toTensor', () => {
  it('builds each dtype the session metadata may ask for', () => {
    expect(toTensor('int64', [951.0], [1]).data).toEqual(BigInt64Array.of(951n));
    expect(toTensor('int32', [2, 5.0], [1, 2]).data).toEqual(Int32Array.of(2, 5));
    expect(toTensor('float32', [0.5], [1]).type).toBe('float32');
    const half = toTensor('float16', [1, -2], [2]);
    expect(half.type).toBe('float16');
    expect(toFloat32(half)).toEqual(Float32Array.of(1, -2));
    expect(() => toTensor('string', [1], [1])).toThrow(/unsupported ONNX input type string/);
  });
});
