/**
 * Raised when a handler's output, a stream chunk or a progress value cannot be sent as JSON. The message names
 * the path of the offending value, e.g. `output.image is binary data ...`.
 */
export class NotSerializableError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = 'NotSerializableError';
  }
}

/**
 * Returns `value` as the JSON value a client will see (what `JSON.parse(JSON.stringify(value))` gives), or
 * throws `NotSerializableError` for values JSON would lose or cannot encode: functions, symbols, BigInt,
 * circular references, Promises, Map, Set and binary data. `undefined` object fields are dropped and
 * non-finite numbers become `null`, as in JSON; a top-level `undefined` is returned as is.
 *
 * @example toJsonValue({ at: new Date(0) }, 'output') // { at: '1970-01-01T00:00:00.000Z' }
 */
export function toJsonValue(value: unknown, label: string): unknown {
  const copy = plainCopy(value, 0);
  return copy !== UNUSUAL ? copy : walk(value, label, '', new Set());
}

const UNUSUAL = Symbol('unusual');
const MAX_PLAIN_DEPTH = 64;

/**
 * The common case without paths or a cycle set: a copy of a value made only of strings, finite numbers, booleans,
 * null, arrays and plain objects without `toJSON`. Anything else (or deeper than `MAX_PLAIN_DEPTH`, which also
 * stops cycles) gives `UNUSUAL`, and `walk` does the full job with the error paths.
 */
function plainCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : UNUSUAL;
    case 'object':
      break;
    default:
      return UNUSUAL;
  }
  if (value === null) return null;
  if (depth >= MAX_PLAIN_DEPTH) return UNUSUAL;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = plainCopy(value[i], depth + 1);
      if (item === UNUSUAL) return UNUSUAL;
      out[i] = item ?? null;
    }
    return out;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return UNUSUAL;
  const obj = value as Record<string, unknown>;
  if (typeof obj['toJSON'] === 'function') return UNUSUAL;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    const item = plainCopy(obj[k], depth + 1);
    if (item === UNUSUAL) return UNUSUAL;
    if (item !== undefined) out[k] = item;
  }
  return out;
}

function fail(path: string, what: string): never {
  throw new NotSerializableError(`${path} is ${what}, which cannot be sent as JSON`);
}

function walk(value: unknown, path: string, key: string, parents: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'bigint':
      return fail(path, 'a BigInt (convert it to a string or a number)');
    case 'function':
      return fail(path, 'a function');
    case 'symbol':
      return fail(path, 'a symbol');
  }
  if (value === null) return null;
  const obj = value as object;
  if (ArrayBuffer.isView(obj) || obj instanceof ArrayBuffer) {
    return fail(path, 'binary data (encode it as base64, or upload it and return a URL)');
  }
  if (typeof (obj as { then?: unknown }).then === 'function') return fail(path, 'a Promise (did you forget `await`?)');
  if (obj instanceof Map) return fail(path, 'a Map (convert it with Object.fromEntries)');
  if (obj instanceof Set) return fail(path, 'a Set (convert it with Array.from)');
  const toJSON = (obj as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    const replaced: unknown = toJSON.call(obj, key);
    if (replaced !== obj) return walk(replaced, path, key, parents);
  }
  if (parents.has(obj)) return fail(path, 'a circular reference');
  parents.add(obj);
  try {
    if (Array.isArray(obj)) {
      return obj.map((item: unknown, i) => walk(item, `${path}[${i}]`, String(i), parents) ?? null);
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) {
      const item = walk(v, `${path}.${k}`, k, parents);
      if (item !== undefined) out[k] = item;
    }
    return out;
  } finally {
    parents.delete(obj);
  }
}
