import { createHash, type Hash } from 'node:crypto';
import {
  BOM,
  concat,
  decodeKey,
  decodePartial,
  EMPTY,
  ESCAPES,
  HEX,
  PLAIN,
  utf8Lead,
  WORDS,
  WS,
} from './json-bytes.js';
import { type JsonCheckError, jsonErrors, unexpected } from './json-errors.js';
import { TopFields } from './json-fields.js';
import { JsonNumber } from './json-number.js';

/**
 * A streaming JSON checker (issue #35): bytes in any chunks (split anywhere, inside a UTF-8 sequence, an escape or
 * a number), no I/O, never a string of a string's contents. It checks what a request body must pass: valid UTF-8
 * (a leading BOM skipped, as TextDecoder does), JSON syntax, nesting at most `maxDepth` deep, no number that
 * parses to an infinite float; the errors (`json-errors.ts`) are those of `parseJsonBody`. With `key` ('input')
 * the top level must be an object: the byte span of the key's last value (JSON.parse keeps the last duplicate) is
 * returned, and the other top-level fields are parsed from their bytes, at most `maxOtherBytes` of them (keys
 * included) in all: past that, 413 at once, without reading on.
 *
 * Differences with a whole `JSON.parse` then a walk: among the 400 `invalid_json` errors of a bad body, the first
 * in stream order wins (a whole-body check reports bad UTF-8 anywhere first); an infinite number is refused even
 * when a later duplicate key replaces it (JSON.parse would keep the finite one).
 *
 * Speed (`node --import tsx packages/server/scripts/bench-json-check.ts`: CPU time, 64 KiB chunks, 2 cores shared
 * with other work, load average 9): a 19 MB base64 string 42 ms (450 MB/s; 66 ms with SHA-256; JSON.parse of the
 * same bytes 51 ms), 19 MB of small objects and numbers 245 ms (95 MB/s; JSON.parse 440 ms), 19 MB of padding
 * outside `input` refused in 3.5 ms. A 114-byte body: 2.5 us in `parseJsonBody` (check + JSON.parse) against 1.6 us
 * for the TextDecoder + scan + JSON.parse it replaced.
 */
export interface JsonCheckOptions {
  /** Deepest nesting allowed (`LIMITS.jsonMaxDepth` for bodies and results). */
  maxDepth: number;
  /** The top-level key whose value is big (`input`): the top level must then be an object. */
  key?: string;
  /** Bytes of the other top-level fields (keys and values) kept and parsed, in all (default 64 KiB). */
  maxOtherBytes?: number;
  /** SHA-256 of the bytes (default true; `false` leaves `sha256` empty). */
  hash?: boolean;
}

export interface JsonCheckResult {
  /** Bytes pushed. */
  size: number;
  /** Hex SHA-256 of the bytes pushed ('' with `hash: false`). */
  sha256: string;
  /** Byte offsets [start, end) in the stream of the last value under `key`. */
  span?: [number, number];
  keyKind: 'object' | 'other' | 'absent';
  /** The other top-level fields, parsed (empty without `key`). */
  fields: Record<string, unknown>;
}

/** Default cap of the other top-level fields' bytes (`maxOtherBytes`). */
export const MAX_OTHER_BYTES = 64 * 1024;
/** Bytes scanned between two checks of the `maxOtherBytes` cap (a big chunk is not read to its end past it). */
const SLICE = 64 * 1024;

// States: expecting a value / an array's first item or ']' / an object's first key or '}' / a key / ':' / ',' or a
// close / nothing (after the top-level value); inside a string, an escape, \uXXXX, a UTF-8 sequence, a number, a
// literal; before the optional BOM.
const S_VALUE = 0,
  S_FIRST_ITEM = 1,
  S_FIRST_KEY = 2,
  S_KEY = 3,
  S_COLON = 4,
  S_AFTER = 5,
  S_END = 6;
const S_STR = 7,
  S_ESC = 8,
  S_UESC = 9,
  S_UTF8 = 10,
  S_NUM = 11,
  S_LIT = 12,
  S_BOM = 13;
const OBJ = 1;
const ARR = 2;

export class JsonChecker {
  private readonly maxDepth: number;
  private readonly key: string | undefined;
  private readonly hash: Hash | undefined;
  private error: JsonCheckError | undefined;
  private size = 0;
  /** Offset in the stream of the chunk being scanned. */
  private base = 0;
  private state = S_BOM;
  private bomAt = 0;
  private depth = 0;
  /** OBJ or ARR per open level (a plain array: a typed one costs microseconds to allocate, per small body). */
  private readonly kinds: number[] = [0];
  private readonly index: number[] = [];
  /** The key (raw string contents) each open object is at, for the path of an error. */
  private readonly keys: Uint8Array[] = [];
  /** Where in `keys[d]` the key is (the chunk it was read in is kept, not copied: no allocation per key). */
  private readonly keyFrom: number[] = [];
  private readonly keyTo: number[] = [];
  // Strings
  private strIsKey = false;
  private strStart = 0;
  private strCarry: Uint8Array[] = [];
  private uLeft = 0;
  private utfNeed = 0;
  private utfLo = 0;
  private utfHi = 0;
  // Numbers and literals
  private readonly num = new JsonNumber();
  private word: Uint8Array = EMPTY;
  private wordAt = 0;
  private nonFinite: string | undefined;
  // Top-level fields (with `key`)
  private topNotObject = false;
  /** With `key`: the top-level fields, read once the top level is an object (`fieldMode`). */
  private readonly top: TopFields | undefined;
  private fieldMode = false;

  constructor(opts: JsonCheckOptions) {
    this.maxDepth = opts.maxDepth;
    this.key = opts.key;
    if (this.key !== undefined) this.top = new TopFields(this.key, opts.maxOtherBytes ?? MAX_OTHER_BYTES);
    this.hash = opts.hash === false ? undefined : createHash('sha256');
  }

  /** Checks the next bytes; throws the body's `JsonCheckError` (and again on every later call) once it is known bad. */
  push(chunk: Uint8Array): void {
    if (this.error) throw this.error;
    this.hash?.update(chunk);
    this.base = this.size;
    this.size += chunk.length;
    try {
      for (let from = 0; from < chunk.length; from += SLICE) {
        const to = Math.min(chunk.length, from + SLICE);
        this.scan(chunk, from, to);
        this.checkCap(to);
      }
      this.carry(chunk);
    } catch (err) {
      this.error = err as JsonCheckError;
      throw err;
    }
  }

  /** The result once every byte is pushed; throws the body's `JsonCheckError` if it is not a complete, valid one. */
  end(): JsonCheckResult {
    if (this.error) throw this.error;
    try {
      return this.finish();
    } catch (err) {
      this.error = err as JsonCheckError;
      throw err;
    }
  }

  private finish(): JsonCheckResult {
    this.base = this.size;
    if (this.state === S_BOM && this.bomAt > 0 && this.bomAt < 3) throw jsonErrors.notUtf8();
    if (this.state === S_BOM || (this.state === S_VALUE && this.depth === 0)) throw jsonErrors.empty();
    if (this.state === S_UTF8) throw jsonErrors.notUtf8();
    if (this.state === S_NUM && this.depth === 0 && this.num.complete()) {
      this.numberEnd(EMPTY, 0);
      this.state = S_END;
    }
    if (this.state !== S_END) throw jsonErrors.syntax(unexpected(undefined, this.size));
    if (this.topNotObject) throw jsonErrors.notObject();
    if (this.nonFinite !== undefined) throw jsonErrors.nonFinite(this.nonFinite);
    const r: JsonCheckResult = {
      size: this.size,
      sha256: this.hash?.digest('hex') ?? '',
      keyKind: this.top?.kind ?? 'absent',
      fields: this.top?.fields ?? {},
    };
    if (this.top?.span) r.span = this.top.span;
    return r;
  }

  private scan(b: Uint8Array, from: number, to: number): void {
    let i = from;
    let state = this.state;
    while (i < to) {
      if (state === S_STR) {
        while (i < to && PLAIN[b[i]!] === 1) i++;
        if (i === to) break;
        const c = b[i]!;
        i++;
        if (c === 0x22) state = this.strIsKey ? this.keyEnd(b, i - 1) : this.afterValue(b, i);
        else if (c === 0x5c) state = S_ESC;
        else if (c < 0x20)
          throw jsonErrors.syntax(`control character 0x${c.toString(16)} in a string at byte ${this.base + i - 1}`);
        else {
          const seq = utf8Lead(c);
          if (seq === 0) throw jsonErrors.notUtf8();
          this.utfNeed = seq & 0xff;
          this.utfLo = (seq >> 8) & 0xff;
          this.utfHi = seq >> 16;
          state = S_UTF8;
        }
        continue;
      }
      if (state === S_NUM) {
        i = this.num.scan(b, i, to);
        if (i < 0) this.fail(b, -1 - i);
        if (i < to) {
          this.numberEnd(b, i);
          state = this.afterValue(b, i);
        }
        continue;
      }
      if (state >= S_ESC) {
        i = this.inToken(b, i, to, state);
        state = this.state;
        continue;
      }
      // Between tokens
      let c = b[i]!;
      if (WS[c] === 1) {
        while (++i < to && WS[b[i]!] === 1);
        if (i === to) break;
        c = b[i]!;
      }
      switch (state) {
        case S_FIRST_ITEM:
        case S_VALUE:
          if (c === 0x5d && state === S_FIRST_ITEM) state = this.close(b, i, ARR);
          else state = this.value(b, i, c);
          break;
        case S_FIRST_KEY:
        case S_KEY:
          if (c === 0x22) {
            this.strIsKey = true;
            this.strStart = i + 1;
            if (this.strCarry.length > 0) this.strCarry = [];
            state = S_STR;
          } else if (c === 0x7d && state === S_FIRST_KEY) state = this.close(b, i, OBJ);
          else this.fail(b, i);
          break;
        case S_COLON:
          if (c !== 0x3a) this.fail(b, i);
          state = S_VALUE;
          break;
        case S_AFTER:
          if (c === 0x2c) {
            if (this.kinds[this.depth] === ARR) {
              this.index[this.depth]!++;
              state = S_VALUE;
            } else state = S_KEY;
          } else if (c === 0x7d || c === 0x5d) state = this.close(b, i, c === 0x7d ? OBJ : ARR);
          else this.fail(b, i);
          break;
        default: // S_END
          this.fail(b, i);
      }
      i++;
    }
    this.state = state;
  }

  /** The first byte of a value at `b[i]` (consumed by the caller): the state it leads to. */
  private value(b: Uint8Array, i: number, c: number): number {
    if (this.depth === 0 && this.key !== undefined) {
      if (c === 0x7b) this.fieldMode = true;
      else this.topNotObject = true;
    } else if (this.depth === 1 && this.fieldMode) this.top!.valueStart(this.base, i, c);
    if (c === 0x22) {
      this.strIsKey = false;
      return S_STR;
    }
    if (c === 0x7b || c === 0x5b) {
      if (++this.depth > this.maxDepth) throw jsonErrors.tooDeep(this.maxDepth);
      this.kinds[this.depth] = c === 0x7b ? OBJ : ARR;
      this.index[this.depth] = 0;
      return c === 0x7b ? S_FIRST_KEY : S_FIRST_ITEM;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      this.num.begin(c, i);
      return S_NUM;
    }
    const word = WORDS[c];
    if (!word) this.fail(b, i);
    this.word = word;
    this.wordAt = 1;
    return S_LIT;
  }

  private close(b: Uint8Array, i: number, kind: number): number {
    if (this.kinds[this.depth] !== kind) this.fail(b, i);
    this.depth--;
    return this.afterValue(b, i + 1);
  }

  /** After a value ending before `b[end]`: the state next, and the top-level field it ended. */
  private afterValue(b: Uint8Array, end: number): number {
    if (this.depth === 0) return S_END;
    if (this.depth === 1 && this.fieldMode) this.top!.valueEnd(b, this.base, end);
    return S_AFTER;
  }

  private keyEnd(b: Uint8Array, quote: number): number {
    const d = this.depth;
    if (this.strCarry.length === 0) {
      this.keys[d] = b;
      this.keyFrom[d] = this.strStart;
      this.keyTo[d] = quote;
    } else {
      const bytes = concat(this.strCarry, b.subarray(this.strStart, quote));
      this.strCarry = [];
      this.keys[d] = bytes;
      this.keyFrom[d] = 0;
      this.keyTo[d] = bytes.length;
    }
    if (this.depth === 1 && this.fieldMode) this.top!.keyRead(this.keyAt(1), this.keyTo[1]! - this.keyFrom[1]!);
    return S_COLON;
  }

  /** 413 as soon as the other fields pass their cap, counting the field or key being read up to `to`. */
  private checkCap(to: number): void {
    if (!this.fieldMode || this.depth === 0) return;
    const keyBytes =
      this.depth === 1 && this.inKey() ? to - this.strStart + this.strCarry.reduce((n, p) => n + p.length, 0) : 0;
    this.top!.check(to, keyBytes, () => decodePartial(concat(this.strCarry, EMPTY)));
  }

  /** At a chunk's end: copies of the bytes of a token or field that goes on into the next chunk. */
  private carry(b: Uint8Array): void {
    if (this.fieldMode) this.top!.carry(b);
    if (this.inKey()) {
      this.strCarry.push(b.slice(this.strStart));
      this.strStart = 0;
    }
    if (this.state === S_NUM) this.num.carryOver(b);
  }

  private inKey(): boolean {
    return this.strIsKey && this.state >= S_STR && this.state <= S_UTF8;
  }

  /** A number ended before `b[end]`: one that may be too big for a float is parsed, its path kept if it is. */
  private numberEnd(b: Uint8Array, end: number): void {
    if (this.nonFinite === undefined && this.num.isInfinite(b, end)) this.nonFinite = this.path();
  }

  /** Escapes, \u digits, UTF-8 continuation bytes and literals, from `b[i]`: where it stopped (sets `state`). */
  private inToken(b: Uint8Array, i: number, to: number, state: number): number {
    if (state === S_ESC) {
      const c = b[i]!;
      if (c === 0x75) {
        this.uLeft = 4;
        this.state = S_UESC;
      } else if (ESCAPES[c] === 1) this.state = S_STR;
      else throw jsonErrors.syntax(`bad escape \\${String.fromCharCode(c)} at byte ${this.base + i - 1}`);
      return i + 1;
    }
    if (state === S_UESC) {
      for (; i < to && this.uLeft > 0; i++, this.uLeft--) if (HEX[b[i]!] !== 1) this.fail(b, i);
      this.state = this.uLeft === 0 ? S_STR : S_UESC;
      return i;
    }
    if (state === S_UTF8) {
      for (; i < to && this.utfNeed > 0; i++, this.utfNeed--) {
        const c = b[i]!;
        if (c < this.utfLo || c > this.utfHi) throw jsonErrors.notUtf8();
        this.utfLo = 0x80;
        this.utfHi = 0xbf;
      }
      this.state = this.utfNeed === 0 ? S_STR : S_UTF8;
      return i;
    }
    if (state === S_LIT) {
      const word = this.word;
      for (; i < to && this.wordAt < word.length; i++, this.wordAt++) if (b[i] !== word[this.wordAt]) this.fail(b, i);
      this.state = this.wordAt === word.length ? this.afterValue(b, i) : S_LIT;
      return i;
    }
    // S_BOM: skipped as TextDecoder does
    for (; i < to && this.bomAt < 3; i++, this.bomAt++) {
      if (b[i] === BOM[this.bomAt]) continue;
      if (this.bomAt > 0) throw jsonErrors.notUtf8();
      this.state = S_VALUE;
      return i;
    }
    if (this.bomAt === 3) this.state = S_VALUE;
    return i;
  }

  /** The key level `d` is at, as the string JSON.parse makes of it. */
  private keyAt(d: number): string {
    return decodeKey(this.keys[d]!.subarray(this.keyFrom[d], this.keyTo[d]));
  }

  /** The dotted path of the value being read (`input.list[2]`), '' at the top. */
  private path(): string {
    let path = '';
    for (let d = 1; d <= this.depth; d++) {
      if (this.kinds[d] === ARR) path += `[${this.index[d]}]`;
      else {
        const k = this.keyAt(d);
        path = path === '' ? k : `${path}.${k}`;
      }
    }
    return path;
  }

  /** A syntax error at `b[i]` (bad UTF-8 outside a string is reported as such, as a whole-body decode would). */
  private fail(b: Uint8Array, i: number): never {
    const c = b[i]!;
    if (c >= 0x80 && (c < 0xc2 || c > 0xf4)) throw jsonErrors.notUtf8();
    throw jsonErrors.syntax(unexpected(c, this.base + i));
  }
}
