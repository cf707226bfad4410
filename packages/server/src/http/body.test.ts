// parseJsonBody: the streaming checker's checks (blobs/json-check.ts) on a whole body, then JSON.parse.
import { describe, expect, it } from 'vitest';
import { parseJsonBody } from './body.js';

const parse = (text: string | Buffer) => parseJsonBody(Buffer.from(text));
const error = (text: string | Buffer) => {
  try {
    parse(text);
  } catch (err) {
    return err as { code: string; message: string; details?: unknown };
  }
  throw new Error('accepted');
};

describe('parseJsonBody', () => {
  it('counts nesting outside strings only, escaped quotes and backslashes included', () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(parse(deep(64))).toBeDefined();
    expect(error(deep(65))).toMatchObject({ code: 'invalid_json', message: 'JSON nested deeper than 64 levels' });
    const tricky = JSON.stringify({ s: `${'[{'.repeat(100)}\\"\\\\"[[[`, t: 'a\\' });
    expect(parse(tricky)).toEqual(JSON.parse(tricky));
    expect(error(`{"a":"\\\\",${deep(64)}}`).code).toBe('invalid_json'); // the string ends at the quote after \\\\
  });

  it('refuses numbers too big for a float with their path, not strings that look like them', () => {
    expect(error('{"a":1e999}')).toMatchObject({ code: 'invalid_request', details: { field: 'a' } });
    expect(error('{"a":{"b":[1,1E+309]}}').message).toMatch(/^a\.b\[1\]: number out of range/);
    expect(error(`{"a":${'9'.repeat(309)}}`).code).toBe('invalid_request');
    expect(error(`{"a":1${'0'.repeat(250)}e99}`).code).toBe('invalid_request'); // 1e349: the old scan missed it
    expect(parse(`{"a":${'9'.repeat(308)},"b":true,"c":1e99,"d":1e-999}`)).toMatchObject({ b: true, c: 1e99, d: 0 });
    expect(parse(JSON.stringify({ image: `e123${'9'.repeat(400)}` }))).toHaveProperty('image');
    expect(error('1e400').message).toMatch(/^the body: number out of range/);
  });

  it('refuses bad UTF-8, empty bodies and bad syntax with invalid_json, and drops a BOM as TextDecoder does', () => {
    expect(error(Buffer.from([0x7b, 0x22, 0xff, 0x22]))).toMatchObject({ message: 'request body is not valid UTF-8' });
    expect(error(' \n')).toMatchObject({
      code: 'invalid_json',
      message: expect.stringMatching(/^request body is empty/),
    });
    expect(error('{"a":1,}')).toMatchObject({ code: 'invalid_json', message: expect.stringMatching(/not valid JSON/) });
    expect(parse('\ufeff{"a":"é"}')).toEqual({ a: 'é' });
    expect(Object.hasOwn(parse('{"__proto__":{"x":1}}') as object, '__proto__')).toBe(true);
  });

  it('reads a 20 MB body with one long string and brackets after it', () => {
    const body = JSON.stringify({ input: { image: 'QUJD'.repeat(5 * 1024 * 1024), deep: [[[1e300]]] } });
    expect((parse(body) as { input: { deep: unknown } }).input.deep).toEqual([[[1e300]]]);
    expect(error(body.replace('1e+300', '1e+309')).details).toEqual({ field: 'input.deep[0][0][0]' });
  });
});
