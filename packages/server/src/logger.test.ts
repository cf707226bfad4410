import { describe, expect, it } from 'vitest';
import { createConsoleLogger } from './logger.js';

describe('createConsoleLogger', () => {
  it('keeps the (level, write) form: lines without a newline, below the level dropped', () => {
    const lines: string[] = [];
    const log = createConsoleLogger('warn', (l) => lines.push(l));
    log.info('hidden');
    log.warn('slow worker', { workerId: 'w-1', ms: 12 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d warn {2}slow worker workerId=w-1 ms=12$/);
  });

  it('options form: hands the level to write and colors on request', () => {
    const got: [string, string][] = [];
    const log = createConsoleLogger({ level: 'debug', color: true, write: (line, level) => got.push([level, line]) });
    log.debug('d');
    log.error('e', { err: new Error('boom') });
    expect(got.map(([level]) => level)).toEqual(['debug', 'error']);
    expect(got[1]?.[1]).toContain('\x1b[31merror\x1b[39m e \x1b[2merr="boom"\x1b[22m\n');
  });
});
