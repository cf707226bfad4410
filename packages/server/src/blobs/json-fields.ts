import { concat, parseBytes } from './json-bytes.js';
import { jsonErrors } from './json-errors.js';

/**
 * The top-level fields of a body checked with a `key` (`json-check.ts`): the byte span of the key's last value,
 * and the other fields kept and parsed, their bytes (keys included) capped at `max` in all, 413 past it.
 */
export class TopFields {
  /** The key whose value is being read. */
  name = '';
  span: [number, number] | undefined;
  kind: 'object' | 'other' | 'absent' = 'absent';
  readonly fields: Record<string, unknown> = {};
  private capturing = false;
  /** Where the value being kept starts in the chunk being read (0 after a chunk's end: the rest is in `parts`). */
  private capStart = 0;
  private parts: Uint8Array[] = [];
  private bytes = 0;
  private spanStart = 0;

  constructor(
    private readonly key: string,
    private readonly max: number,
  ) {}

  /** A top-level key was read: `rawLength` bytes between its quotes, counted. */
  keyRead(name: string, rawLength: number): void {
    this.name = name;
    this.bytes += rawLength;
    if (this.bytes > this.max) throw this.tooLarge(name);
  }

  /** Its value starts at `b[i]` (stream offset `base + i`) with the byte `c`. */
  valueStart(base: number, i: number, c: number): void {
    if (this.name === this.key) {
      this.spanStart = base + i;
      this.kind = c === 0x7b ? 'object' : 'other';
      this.capturing = false;
    } else {
      this.capturing = true;
      this.capStart = i;
      if (this.parts.length > 0) this.parts = [];
    }
  }

  /** Its value ended before `b[end]`. */
  valueEnd(b: Uint8Array, base: number, end: number): void {
    if (!this.capturing) {
      this.span = [this.spanStart, base + end];
      return;
    }
    this.capturing = false;
    const tail = b.subarray(this.capStart, end);
    this.bytes += tail.length;
    if (this.bytes > this.max) throw this.tooLarge(this.name);
    const value = parseBytes(concat(this.parts, tail));
    this.parts = [];
    // Defined, not assigned: a "__proto__" field stays an own property, as JSON.parse makes it.
    Object.defineProperty(this.fields, this.name, { value, enumerable: true, writable: true, configurable: true });
  }

  /** 413 once past the cap, counting the value being kept up to `to`, or `keyBytes` of a key being read. */
  check(to: number, keyBytes: number, partialKey: () => string): void {
    const pending = this.capturing ? to - this.capStart : keyBytes;
    if (this.bytes + pending > this.max) throw this.tooLarge(this.capturing ? this.name : `${partialKey()}...`);
  }

  /** At a chunk's end: a copy of the part of the value being kept. */
  carry(b: Uint8Array): void {
    if (!this.capturing) return;
    this.bytes += b.length - this.capStart;
    this.parts.push(b.slice(this.capStart));
    this.capStart = 0;
  }

  private tooLarge(field: string) {
    return jsonErrors.otherFieldsTooLarge(this.key, field, this.max);
  }
}
