import { describe, expect, it } from 'vitest';
import { createLogger, type LogRecord } from './create-logger.js';
import { parseJsonLogLine, prettyLine } from './log-line.js';

describe('createLogger', () => {
  it("writes pino's JSON lines: level number, epoch ms, pid, hostname, bound fields, the call's fields, msg last", () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', write: (l) => lines.push(l) }).child({ workerId: 'w1' });
    log.debug('hidden');
    log.child({ jobId: 'j1', attempt: 2 }).info('job completed', { ms: 12 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/\n$/);
    const o = JSON.parse(lines[0] as string) as Record<string, unknown>;
    expect(Object.keys(o)).toEqual(['level', 'time', 'pid', 'hostname', 'workerId', 'jobId', 'attempt', 'ms', 'msg']);
    expect(o).toMatchObject({ level: 30, pid: process.pid, workerId: 'w1', jobId: 'j1', attempt: 2, ms: 12 });
    expect(Math.abs((o.time as number) - Date.now())).toBeLessThan(5_000);
    expect(parseJsonLogLine((lines[0] as string).trimEnd())).toMatchObject({
      level: 'info',
      msg: 'job completed',
      fields: { workerId: 'w1', jobId: 'j1', attempt: 2, ms: 12 },
    });
  });

  it('never throws on odd messages and fields: cycles, BigInt, errors, non-objects', () => {
    const lines: string[] = [];
    const log = createLogger({ write: (l) => lines.push(l) });
    const cyclic: Record<string, unknown> = { big: 1n };
    cyclic.self = cyclic;
    log.info({ obj: true }, { c: cyclic, n: 2n });
    log.error('err', { error: new Error('boom') });
    log.info('not an object', 5 as unknown as Record<string, unknown>);
    const [a, b, c] = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(a).toMatchObject({ msg: '{"obj":true}', c: { big: '1', self: '[Circular]' }, n: '2' });
    expect(b).toMatchObject({ level: 50, error: { type: 'Error', message: 'boom' } });
    expect(c).toMatchObject({ value: 5 });
  });

  it('pretty: time, level, message, bound then own fields as key=value; colors on request', () => {
    const got: [string, string][] = [];
    const log = createLogger({ level: 'debug', format: 'pretty', color: true, write: (l, lvl) => got.push([lvl, l]) });
    log.child({ jobId: 'j1' }).error('e', { err: new Error('boom') });
    expect(got[0]?.[0]).toBe('error');
    const ESC = '\x1b';
    expect(got[0]?.[1]).toMatch(/^\S+\d\d:\d\d:\d\d\S+ /);
    expect(got[0]?.[1]?.slice(got[0][1].indexOf(' ') + 1)).toBe(
      `${ESC}[31merror${ESC}[39m e ${ESC}[2mjobId=j1 err="boom"${ESC}[22m\n`,
    );
    expect(prettyLine('warn', 0, { a: 'x y' }, 'two\nlines', false)).toBe('00:00:00 warn  two\\nlines a="x y"');
  });

  it('a sink gets records with the bound and own fields merged; silent prints nothing', () => {
    const records: LogRecord[] = [];
    const log = createLogger({ level: 'info', bindings: { workerId: 'w' }, sink: (r) => records.push(r) });
    log.child({ jobId: 'j' }).warn('shown', { n: 1 });
    createLogger({ level: 'silent', sink: (r) => records.push(r) }).error('x');
    expect(records).toEqual([
      { level: 'warn', time: expect.any(Date), msg: 'shown', fields: { workerId: 'w', jobId: 'j', n: 1 } },
    ]);
  });

  it('parseJsonLogLine refuses what is not a log line', () => {
    for (const line of ['hello', '{"level":30', '{"level":31,"time":0,"msg":"x"}', '{"level":30,"msg":"x"}'])
      expect(parseJsonLogLine(line)).toBeUndefined();
  });
});
