/**
 * Incremental detokenization with stop strings: turns generated token ids into text deltas as they come,
 * holding back text that may still become a stop string or an unfinished multi-byte character.
 */

export type Decode = (ids: number[]) => string;

export class Detokenizer {
  private readonly ids: number[] = [];
  private prefixOffset = 0;
  private readOffset = 0;
  /** All text decoded so far (before stop-string truncation). */
  private text = '';
  /** How much of `text` has been handed out as deltas. */
  private emitted = 0;
  /** Set once a stop string appeared: the text ends before it. */
  stopped = false;

  private readonly decode: Decode;

  constructor(
    decode: Decode,
    private readonly stop: readonly string[],
  ) {
    this.decode = (ids) => (ids.length === 0 ? '' : decode(ids));
  }

  /** Adds one token; returns the text that can be released now ('' when nothing is safe yet). */
  push(id: number): string {
    if (this.stopped) return '';
    this.ids.push(id);
    // Decode a window that starts one token earlier so leading spaces and merged bytes come out right.
    const prefix = this.decode(this.ids.slice(this.prefixOffset, this.readOffset));
    const full = this.decode(this.ids.slice(this.prefixOffset));
    if (full.length > prefix.length && !full.endsWith('\uFFFD')) {
      this.text += full.slice(prefix.length);
      this.prefixOffset = this.readOffset;
      this.readOffset = this.ids.length;
    }
    return this.release(false);
  }

  /** Ends the stream: releases whatever is held back (except a matched stop string). */
  finish(): string {
    return this.release(true);
  }

  /** The final text (cut before the first stop string). */
  get result(): string {
    return this.text;
  }

  private release(final: boolean): string {
    for (const s of this.stop) {
      const at = this.text.indexOf(s, Math.max(0, this.emitted - s.length + 1));
      if (at >= 0) {
        this.text = this.text.slice(0, at);
        this.stopped = true;
      }
    }
    let safe = this.text.length;
    if (!final && !this.stopped) safe -= this.heldBack();
    if (safe <= this.emitted) return '';
    const delta = this.text.slice(this.emitted, safe);
    this.emitted = safe;
    return delta;
  }

  /** Length of the longest end of `text` that is the start of some stop string. */
  private heldBack(): number {
    let hold = 0;
    for (const s of this.stop) {
      for (let k = Math.min(s.length - 1, this.text.length); k > hold; k--) {
        if (this.text.endsWith(s.slice(0, k))) {
          hold = k;
          break;
        }
      }
    }
    return hold;
  }
}
