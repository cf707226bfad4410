import { describe, expect, it } from 'vitest';
import { createLogger, formatLogLine, type LogRecord } from './logger.js';

describe('logger', () => {
  it('formats one line: level time worker job msg {fields}', () => {
    const line = formatLogLine({
      level: 'info',
      time: new Date(0),
      worker: 'w1',
      job: 'j1',
      msg: 'hello\nworld',
      fields: { a: 1 },
    });
    expect(line).toBe('info  1970-01-01T00:00:00.000Z worker=w1 job=j1 hello\\nworld {"a":1}');
  });

  it('filters by level and tags children', () => {
    const records: LogRecord[] = [];
    const log = createLogger({ level: 'info', worker: 'w1', sink: (r) => records.push(r) });
    log.debug('hidden');
    log.child({ job: 'j9' }).warn('shown', { n: 1 });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ level: 'warn', worker: 'w1', job: 'j9', msg: 'shown', fields: { n: 1 } });
  });

  it('silent prints nothing', () => {
    const records: LogRecord[] = [];
    createLogger({ level: 'silent', sink: (r) => records.push(r) }).error('x');
    expect(records).toEqual([]);
  });

  it('never throws on odd messages and fields', () => {
    const lines: string[] = [];
    const log = createLogger({ sink: (r) => lines.push(formatLogLine(r)) });
    const cyclic: Record<string, unknown> = { big: 1n };
    cyclic.self = cyclic;
    log.info({ obj: true }, cyclic);
    log.info('err', { error: new Error('boom') });
    log.info('not an object', 5 as unknown as Record<string, unknown>);
    expect(lines[0]).toContain('{"obj":true} {"big":"1","self":"[Circular]"}');
    expect(lines[1]).toContain('"message":"boom"');
    expect(lines[2]).toContain('{"value":5}');
  });
});
