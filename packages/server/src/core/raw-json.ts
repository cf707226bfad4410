import { randomBytes } from 'node:crypto';

/**
 * A JSON value kept as the bytes it arrived as (issue #31): the `input` of a big request body and the `output` of
 * a big `job.complete` are validated once (off the event loop, `http/json-pool.ts`) and then handed on as they
 * are, into the store, the `job.assign` frame and the answer, instead of being parsed and serialized again on
 * the event loop at each step. `value` parses on first use (a reader that needs the fields); `JSON.stringify`
 * of a record holding one stays correct through `toJSON`, only `jsonBytes` splices the bytes without parsing.
 */
export class RawJson {
  private parsed: unknown;
  private done = false;

  /** `source`: valid JSON (checked by whoever made it), as UTF-8 bytes or a string. */
  constructor(private readonly source: Buffer | string) {}

  /** The JSON text (a subclass may read it from elsewhere: `BlobJson` reads its file). */
  get text(): Buffer | string {
    return this.source;
  }

  /** Its length in bytes (or characters, for a string). */
  get length(): number {
    return this.source.length;
  }

  get value(): unknown {
    if (!this.done) {
      const text = this.text;
      this.parsed = JSON.parse(typeof text === 'string' ? text : text.toString('utf8'));
      this.done = true;
    }
    return this.parsed;
  }

  /** The JSON text as a string (a store column). */
  string(): string {
    const text = this.text;
    return typeof text === 'string' ? text : text.toString('utf8');
  }

  /** The JSON text as UTF-8 bytes. */
  bytes(): Buffer {
    const text = this.text;
    return typeof text === 'string' ? Buffer.from(text) : text;
  }

  /**
   * The bytes as pieces to stream, for a value kept outside memory (`BlobJson`: a file); undefined for bytes held
   * here. An answer holding such a value is written piece by piece (`jsonParts`), never built whole.
   */
  pieces(): AsyncIterable<Uint8Array> | undefined {
    return undefined;
  }

  toJSON(): unknown {
    return this.value;
  }
}

/** `v` itself, or the parsed value when it is a `RawJson` (a reader that needs the fields of an input). */
export const plainJson = <T>(v: T | RawJson): T => (v instanceof RawJson ? (v.value as T) : v);

/** How deep `jsonBytes` looks for `RawJson` values (a job object's `output`, a pulled job's `input`...). */
const RAW_DEPTH = 4;

/**
 * JSON text of `value` with any `RawJson` inside it (up to `RAW_DEPTH` levels down) spliced in as its bytes:
 * a string when there is none (plain `JSON.stringify`), else a Buffer. Placeholders carry a random nonce per
 * call, so no string of the value can be mistaken for one.
 */
export function jsonBytes(value: unknown): string | Buffer {
  const parts = jsonParts(value);
  if (typeof parts === 'string') return parts;
  // One allocation, a kept string encoded straight into it: `Buffer.from` then `concat` made and filled two
  // 19 MiB buffers per big frame, and a fresh buffer's first touch is most of a copy's cost.
  const texts = parts.map((p) => (p instanceof RawJson ? p.text : p));
  const out = Buffer.allocUnsafe(
    texts.reduce((n, t) => n + (typeof t === 'string' ? Buffer.byteLength(t) : t.length), 0),
  );
  let at = 0;
  for (const t of texts) at += typeof t === 'string' ? out.write(t, at) : t.copy(out, at);
  return out;
}

/**
 * `jsonBytes` as pieces: the JSON text of `value` (a string when it holds no `RawJson`), else the text around each
 * `RawJson` as Buffers with the `RawJson` values between them, for a writer that streams the ones kept in files.
 */
export function jsonParts(value: unknown): string | (Buffer | RawJson)[] {
  // The common case (no `RawJson` anywhere: every small job) costs a walk, no nonce and no copy.
  if (!holdsRaw(value, 0)) return JSON.stringify(value);
  const raws: RawJson[] = [];
  const nonce = randomBytes(9).toString('base64url');
  const swapped = swap(value, raws, nonce, 0);
  const text = JSON.stringify(swapped);
  if (raws.length === 0) return text;
  const parts: (Buffer | RawJson)[] = [];
  let from = 0;
  for (let i = 0; i < raws.length; i++) {
    const token = JSON.stringify(placeholder(nonce, i));
    const at = text.indexOf(token, from);
    if (at < 0) continue; // dropped by JSON.stringify (e.g. under a key holding a function): nothing to splice
    parts.push(Buffer.from(text.slice(from, at)), raws[i]!);
    from = at + token.length;
  }
  parts.push(Buffer.from(text.slice(from)));
  return parts;
}

/** Whether `v` holds a `RawJson` within `RAW_DEPTH` levels (the same places `swap` looks). */
function holdsRaw(v: unknown, depth: number): boolean {
  if (v instanceof RawJson) return true;
  if (depth >= RAW_DEPTH || v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length && i < 64; i++) if (holdsRaw(v[i], depth + 1)) return true;
    return false;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return false;
  for (const k in v) if (holdsRaw((v as Record<string, unknown>)[k], depth + 1)) return true;
  return false;
}

const placeholder = (nonce: string, i: number) => `\u0000raw:${nonce}:${i}`;

/** `v` with its `RawJson` values replaced by placeholder strings (objects copied only on the way to one). */
function swap(v: unknown, raws: RawJson[], nonce: string, depth: number): unknown {
  if (v instanceof RawJson) {
    raws.push(v);
    return placeholder(nonce, raws.length - 1);
  }
  if (depth >= RAW_DEPTH || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length && i < 64; i++) {
      const s = swap(v[i], raws, nonce, depth + 1);
      if (s !== v[i]) (out ??= v.slice())[i] = s;
    }
    return out ?? v;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return v;
  let out: Record<string, unknown> | undefined;
  for (const k in v) {
    const x = (v as Record<string, unknown>)[k];
    const s = swap(x, raws, nonce, depth + 1);
    if (s !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = s;
  }
  return out ?? v;
}

/**
 * A big input a read left in the store (PostgreSQL: `Store.get(id, { input: false })`, and a finish's answer):
 * reading a 19 MiB column back, only to drop it, was most of the event loop's work per big job there (issue #35's
 * stall). Any use of its bytes throws, naming the job, so a caller that needs the input reads the job with it.
 */
export class UnreadJson extends RawJson {
  constructor(readonly jobId: string) {
    super('');
  }

  override get text(): never {
    throw new Error(`the input of job ${this.jobId} was not read from the store (a big value left there)`);
  }
}
