import { describe, expect, it } from 'vitest';
import { NotSerializableError, toJsonValue } from './json-value.js';

describe('toJsonValue', () => {
  it('returns what JSON would give for ordinary values', () => {
    const v = { a: 1, b: 'x', c: [1, undefined, null], d: undefined, e: new Date(0), f: NaN, g: { h: true } };
    expect(toJsonValue(v, 'output')).toEqual(JSON.parse(JSON.stringify(v)));
  });

  it('copies plain values (later changes to the original do not reach the result), deep ones included', () => {
    const v = { a: [1, { b: 'x', u: undefined }], n: null, o: Object.create(null) as object };
    const out = toJsonValue(v, 'output') as typeof v;
    v.a.push(2);
    expect(out).toEqual({ a: [1, { b: 'x' }], n: null, o: {} });
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) deep = [deep];
    expect(toJsonValue(deep, 'output')).toEqual(JSON.parse(JSON.stringify(deep)));
  });

  it('keeps a top-level undefined (the caller decides)', () => {
    expect(toJsonValue(undefined, 'output')).toBeUndefined();
  });

  it('allows the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(toJsonValue({ a: shared, b: shared }, 'output')).toEqual({ a: { x: 1 }, b: { x: 1 } });
  });

  it.each([
    [{ p: Promise.resolve(1) }, 'output.p is a Promise (did you forget `await`?)'],
    [{ s: new Set([1]) }, 'output.s is a Set'],
    [[Buffer.from('x')], 'output[0] is binary data'],
    [{ sym: Symbol('x') }, 'output.sym is a symbol'],
    [{ big: 1n }, 'output.big is a BigInt'],
  ])('rejects %o', (value, message) => {
    expect(() => toJsonValue(value, 'output')).toThrow(NotSerializableError);
    expect(() => toJsonValue(value, 'output')).toThrow(message);
  });
});
