import { describe, expect, it } from 'vitest';
import { createLogger } from './create-logger.js';
import { errorText } from './error-text.js';

describe('errors in logs', () => {
  it('errorText: the message, its cause when it has one, String() of anything else', () => {
    expect(errorText(new TypeError('x is undefined'))).toBe('x is undefined');
    expect(errorText(new Error('fetch failed', { cause: new Error('ECONNREFUSED 127.0.0.1:1') }))).toBe(
      'fetch failed: ECONNREFUSED 127.0.0.1:1',
    );
    expect(errorText('plain')).toBe('plain');
    expect(errorText(42)).toBe('42');
  });

  it('an Error logged under err keeps its type, message and stack in JSON lines, its message in pretty ones', () => {
    const lines: string[] = [];
    const write = (line: string) => void lines.push(line);
    const err = new RangeError('out of range');
    createLogger({ level: 'info', format: 'json', write }).error('sweep failed', { err });
    createLogger({ level: 'info', format: 'pretty', write }).error('sweep failed', { err });
    const json = JSON.parse(lines[0]!) as { err: { type: string; message: string; stack: string } };
    expect(json.err).toMatchObject({ type: 'RangeError', message: 'out of range' });
    expect(json.err.stack).toContain('error-text.test.ts');
    expect(lines[1]).toContain('err="out of range"');
  });
});
