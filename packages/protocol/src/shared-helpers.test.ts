import { describe, expect, it } from 'vitest';
import { describeValue } from './describe-value.js';
import { formatLogFields, isLogLevel, LOG_LEVEL_RANK, LOG_LEVELS } from './log.js';
import { ConfigError } from './user-errors.js';

describe('log levels', () => {
  it('ranks every level in list order, silent last', () => {
    const ranks = LOG_LEVELS.map((l) => LOG_LEVEL_RANK[l]);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(isLogLevel('silent')).toBe(true);
    expect(isLogLevel('verbose')).toBe(false);
  });

  it('formats fields as key=value, quoting strings with spaces and showing errors by message', () => {
    expect(formatLogFields({ a: 1, b: 'x y', c: 'plain', d: undefined, e: new Error('boom'), f: { g: [1] } })).toBe(
      'a=1 b="x y" c=plain e="boom" f={"g":[1]}',
    );
    expect(formatLogFields(undefined)).toBe('');
  });
});

describe('describeValue', () => {
  it.each([
    [undefined, 'nothing'],
    [null, 'null'],
    [() => 1, 'a function'],
    [[1], 'an array'],
    [{ a: 1 }, 'an object'],
    ['four', '"four"'],
    ['x'.repeat(50), `"${'x'.repeat(40)}…"`],
    [0, '0'],
    [false, 'false'],
  ])('%s -> %s', (value, text) => {
    expect(describeValue(value)).toBe(text);
  });
});

describe('ConfigError', () => {
  it('lists the problems under the message and keeps the file', () => {
    const err = new ConfigError('invalid config file a.json', { file: 'a.json', problems: ['endpoints.x: bad'] });
    expect(err.message).toBe('invalid config file a.json\n  - endpoints.x: bad');
    expect([err.name, err.file, err.problems]).toEqual(['ConfigError', 'a.json', ['endpoints.x: bad']]);
    expect(new ConfigError('BERTH_CONCURRENCY bad').message).toBe('BERTH_CONCURRENCY bad');
  });
});
