import { describe, expect, it } from 'vitest';
import { RawJson, jsonBytes, plainJson } from './raw-json.js';

describe('RawJson and jsonBytes', () => {
  it('splices raw values as their bytes, and only them', () => {
    const raw = new RawJson(Buffer.from('{"big": "x\\"y", "u": "é"}'));
    // A string of the value that looks like a placeholder stays a string (each call has its own nonce).
    const value = { id: 'j1', output: raw, note: '\u0000raw:abc:0', list: [raw, 1] };
    const out = jsonBytes(value);
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(JSON.parse(out.toString())).toEqual({
      id: 'j1',
      output: { big: 'x"y', u: 'é' },
      note: '\u0000raw:abc:0',
      list: [{ big: 'x"y', u: 'é' }, 1],
    });
    expect(value.output).toBe(raw); // the value itself is not changed
  });

  it('is JSON.stringify when there is no raw value', () => {
    const v = { a: [1, { b: 'c' }], d: null };
    expect(jsonBytes(v)).toBe(JSON.stringify(v));
  });

  it('parses on first use, for readers that need the fields; JSON.stringify stays correct', () => {
    const raw = new RawJson('{"a":1}');
    expect(plainJson(raw)).toEqual({ a: 1 });
    expect(plainJson({ b: 2 })).toEqual({ b: 2 });
    expect(JSON.stringify({ input: raw })).toBe('{"input":{"a":1}}');
  });

  it('splices strings and bytes of several raw values, multi-byte characters included, into one buffer', () => {
    const out = jsonBytes({ a: new RawJson('"é€😀"'), b: [new RawJson(Buffer.from('{"z":"ü"}')), 'ß'] });
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(out.toString('utf8')).toBe('{"a":"é€😀","b":[{"z":"ü"},"ß"]}');
  });
});
