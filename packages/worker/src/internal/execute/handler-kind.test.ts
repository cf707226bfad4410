import { describe, expect, it } from 'vitest';
import { asStreamSource, isStreamingHandler } from './handler-kind.js';

describe('handler kinds', () => {
  it('recognises generator functions', () => {
    expect(isStreamingHandler(function* () {})).toBe(true);
    expect(isStreamingHandler(async function* () {})).toBe(true);
    expect(isStreamingHandler(async () => 1)).toBe(false);
    expect(isStreamingHandler(() => 1)).toBe(false);
  });

  it('treats iterators and async iterables as streams, other iterables as values', () => {
    expect(asStreamSource([1, 2])).toBeUndefined();
    expect(asStreamSource('abc')).toBeUndefined();
    expect(asStreamSource(new Map())).toBeUndefined();
    expect(asStreamSource([1].values())?.kind).toBe('sync');
    expect(asStreamSource((async function* () {})())?.kind).toBe('async');
    expect(asStreamSource(new ReadableStream())?.kind).toBe('async');
  });
});
