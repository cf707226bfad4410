import { concat } from './json-bytes.js';

// After '-', after a leading 0, integer digits, after '.', fraction digits, after 'e', after its sign, exponent
// digits.
const N_MINUS = 0;
const N_ZERO = 1;
const N_INT = 2;
const N_DOT = 3;
const N_FRAC = 4;
const N_E = 5;
const N_ESIGN = 6;
const N_EXP = 7;
/** The states a number may end in. */
const ENDS = [false, true, true, false, true, false, false, true];

/**
 * One JSON number read across chunks (`json-check.ts`): its grammar, and whether it parses to an infinite float
 * (only a number whose integer digits plus exponent reach 309 may: that one is parsed from its bytes).
 */
export class JsonNumber {
  private state = 0;
  /** Where it starts in the chunk being read (0 after a chunk's end: the bytes before are in `carry`). */
  private start = 0;
  private carry: Uint8Array[] = [];
  private intDigits = 0;
  private exp = 0;
  private expNeg = false;

  /** A number starting with byte `c` (a digit or '-') at `b[i]`. */
  begin(c: number, i: number): void {
    this.state = c === 0x2d ? N_MINUS : c === 0x30 ? N_ZERO : N_INT;
    this.start = i;
    if (this.carry.length > 0) this.carry = [];
    this.intDigits = c === 0x2d ? 0 : 1;
    this.exp = 0;
    this.expNeg = false;
  }

  /** Reads from `b[i]`: where the number ended (`to` if it goes on), or `-1 - at` for a byte it cannot take. */
  scan(b: Uint8Array, i: number, to: number): number {
    let ns = this.state;
    for (; i < to; i++) {
      const c = b[i]!;
      const digit = c >= 0x30 && c <= 0x39;
      if (ns === N_INT || ns === N_FRAC) {
        if (digit) {
          if (ns === N_INT) this.intDigits++;
          continue;
        }
        if (c === 0x2e && ns === N_INT) ns = N_DOT;
        else if (c === 0x65 || c === 0x45) ns = N_E;
        else break;
      } else if (ns === N_EXP) {
        if (!digit) break;
        if (this.exp < 1e6) this.exp = this.exp * 10 + c - 0x30;
      } else if (ns === N_ZERO) {
        if (c === 0x2e) ns = N_DOT;
        else if (c === 0x65 || c === 0x45) ns = N_E;
        else break;
      } else if (ns === N_E && (c === 0x2b || c === 0x2d)) {
        this.expNeg = c === 0x2d;
        ns = N_ESIGN;
      } else {
        if (!digit) return -1 - i;
        if (ns === N_MINUS) {
          ns = c === 0x30 ? N_ZERO : N_INT;
          this.intDigits = 1;
        } else if (ns === N_DOT) ns = N_FRAC;
        else {
          this.exp = c - 0x30;
          ns = N_EXP;
        }
      }
    }
    this.state = ns;
    return i < to && !ENDS[ns] ? -1 - i : i;
  }

  /** Whether what was read is a whole number (at the end of the body). */
  complete(): boolean {
    return ENDS[this.state]!;
  }

  /** Whether the number, ended before `b[end]`, parses to an infinite float. */
  isInfinite(b: Uint8Array, end: number): boolean {
    if (this.intDigits + (this.expNeg ? -this.exp : this.exp) < 309) return false;
    const text = Buffer.from(concat(this.carry, b.subarray(this.start, end))).toString('latin1');
    return !Number.isFinite(Number(text));
  }

  /** At a chunk's end: keeps a copy of the bytes read so far. */
  carryOver(b: Uint8Array): void {
    this.carry.push(b.slice(this.start));
    this.start = 0;
  }
}
