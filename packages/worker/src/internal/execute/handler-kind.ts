/** A value a handler produced that the runtime iterates as a stream. */
export type StreamSource =
  | { kind: 'sync'; iterator: Iterator<unknown, unknown> }
  | { kind: 'async'; iterator: AsyncIterator<unknown, unknown> };

/**
 * True for generator and async generator functions: the worker announces `stream: true` in `hello`.
 * (A plain function that returns an iterator still streams, but cannot be recognised before it runs.)
 *
 * @example isStreamingHandler(async function* () {}) // true
 */
export function isStreamingHandler(fn: unknown): boolean {
  if (typeof fn !== 'function') return false;
  const tag = (fn as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag];
  return tag === 'GeneratorFunction' || tag === 'AsyncGeneratorFunction';
}

/**
 * Returns how to iterate `value` when it is a stream: an async iterable (async generator, ReadableStream,
 * Node Readable) or a sync iterator (a generator object). Arrays, strings, Maps and other iterables that are not
 * iterators are plain outputs and give `undefined`.
 */
export function asStreamSource(value: unknown): StreamSource | undefined {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  const v = value as Partial<AsyncIterable<unknown> & Iterator<unknown>> & { [Symbol.iterator]?: unknown };
  if (typeof v[Symbol.asyncIterator] === 'function') {
    return {
      kind: 'async',
      iterator: (v as AsyncIterable<unknown>)[Symbol.asyncIterator]() as AsyncIterator<unknown, unknown>,
    };
  }
  if (typeof v.next === 'function' && typeof v[Symbol.iterator] === 'function') {
    return { kind: 'sync', iterator: v as Iterator<unknown, unknown> };
  }
  return undefined;
}

/** True for promises and other thenables. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
