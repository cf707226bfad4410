/** Byte tables and helpers of the streaming JSON checker (`json-check.ts`). */

const table = (f: (c: number) => boolean) => Uint8Array.from({ length: 256 }, (_, c) => (f(c) ? 1 : 0));
/** Bytes a string holds as they are: not '"', not '\', not a control character, ASCII. */
export const PLAIN = table((c) => c >= 0x20 && c !== 0x22 && c !== 0x5c && c < 0x80);
export const WS = table((c) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d);
export const HEX = table((c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102));
/** The characters after a backslash, but `u`. */
export const ESCAPES = table((c) => '"\\/bfnrt'.includes(String.fromCharCode(c)));
/** The literals, by their first byte. */
export const WORDS: Record<number, Uint8Array | undefined> = {
  116: Buffer.from('true'),
  102: Buffer.from('false'),
  110: Buffer.from('null'),
};
export const BOM = [0xef, 0xbb, 0xbf];
export const EMPTY = new Uint8Array(0);

const utf8 = new TextDecoder('utf-8', { fatal: true });

export const concat = (parts: Uint8Array[], tail: Uint8Array): Uint8Array =>
  parts.length === 0 ? tail : Buffer.concat([...parts, tail]);

/**
 * The continuation bytes a UTF-8 lead byte needs, packed as `need | lo << 8 | hi << 16` (the range of the next
 * byte: overlong forms, surrogates and code points past U+10FFFF are refused as TextDecoder does); 0 for a byte
 * that cannot lead a sequence.
 */
export function utf8Lead(c: number): number {
  const seq = (need: number, lo: number, hi: number) => need | (lo << 8) | (hi << 16);
  if (c >= 0xc2 && c <= 0xdf) return seq(1, 0x80, 0xbf);
  if (c === 0xe0) return seq(2, 0xa0, 0xbf);
  if (c === 0xed) return seq(2, 0x80, 0x9f);
  if (c >= 0xe1 && c <= 0xef) return seq(2, 0x80, 0xbf);
  if (c === 0xf0) return seq(3, 0x90, 0xbf);
  if (c >= 0xf1 && c <= 0xf3) return seq(3, 0x80, 0xbf);
  if (c === 0xf4) return seq(3, 0x80, 0x8f);
  return 0;
}

/** A key's string contents (valid, checked) as the string JSON.parse makes of them. */
export function decodeKey(bytes: Uint8Array): string {
  const s = utf8.decode(bytes);
  return s.includes('\\') ? (JSON.parse(`"${s}"`) as string) : s;
}

/** JSON text (checked) as a value. */
export const parseBytes = (bytes: Uint8Array): unknown => JSON.parse(utf8.decode(bytes));

/** The start of a key cut anywhere (for an error message). */
export const decodePartial = (bytes: Uint8Array): string => Buffer.from(bytes.subarray(0, 40)).toString('utf8');
