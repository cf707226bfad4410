import type { LogMessage } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { createLogger, type LogRecord } from '../../logger.js';
import { withConsoleForwarding } from './console-capture.js';
import { LogShipper } from './log-shipper.js';

describe('LogShipper', () => {
  it('batches lines per attempt, keeps order, and holds them while the connection is down', () => {
    const sent: LogMessage[] = [];
    let up = false;
    const shipper = new LogShipper((m) => (up ? (sent.push(m), true) : false), 60_000);
    shipper.add('j1', 1, 'info', 'a');
    shipper.add('j2', 3, 'warn', 'b', { n: 1 });
    shipper.add('j1', 1, 'error', 'c');
    shipper.flush();
    expect(sent).toEqual([]);
    up = true;
    shipper.flush();
    expect(sent.map((m) => [m.id, m.attempt, m.lines.map((l) => l.msg)])).toEqual([
      ['j1', 1, ['a', 'c']],
      ['j2', 3, ['b']],
    ]);
    expect(sent[1]!.lines[0]!.fields).toEqual({ n: 1 });
  });

  it('sends a full message at once, cuts long lines, and drops (counting) past its buffer', () => {
    const sent: LogMessage[] = [];
    const shipper = new LogShipper((m) => (sent.push(m), true), 60_000, 150);
    for (let i = 0; i < 100; i++) shipper.add('j', 1, 'info', `l${i}`);
    expect(sent.length).toBe(1);
    shipper.add('j', 1, 'info', 'x'.repeat(20_000));
    shipper.flush();
    expect(sent[1]!.lines[0]!.msg.length).toBe(8_000);
    const down = new LogShipper(() => false, 60_000, 150);
    for (let i = 0; i < 160; i++) down.add('j', 1, 'info', 'l');
    expect(down.dropped).toBe(10);
  });

  it('wrap() prints through the base logger and ships info and above (debug too when the base prints debug)', () => {
    const printed: LogRecord[] = [];
    const sent: LogMessage[] = [];
    const shipper = new LogShipper((m) => (sent.push(m), true), 60_000);
    const log = shipper.wrap(createLogger({ level: 'info', sink: (r) => printed.push(r) }), 'j', 2);
    log.debug('hidden');
    log.info('shown', { err: new Error('boom') });
    log.child({ job: 'j' }).warn({ obj: true });
    shipper.flush();
    expect(printed.map((r) => r.msg)).toEqual(['shown', '{"obj":true}']);
    expect(sent[0]!.lines.map((l) => [l.level, l.msg])).toEqual([
      ['info', 'shown'],
      ['warn', '{"obj":true}'],
    ]);
    expect((sent[0]!.lines[0]!.fields!['err'] as { message: string }).message).toBe('boom');
    const verbose = new LogShipper((m) => (sent.push(m), true), 60_000);
    verbose.wrap(createLogger({ level: 'debug', sink: () => {} }), 'j', 1).debug('now shipped');
    verbose.flush();
    expect(sent.at(-1)!.lines[0]!.msg).toBe('now shipped');
  });

  it('console calls inside a job context are forwarded with that job, across awaits; outside, they are not', async () => {
    const got: [string, string, string][] = [];
    await Promise.all(
      ['a', 'b'].map((job) =>
        withConsoleForwarding(
          (level, message) => got.push([job, level, message]),
          async () => {
            console.log('start %s', job);
            await new Promise((r) => setTimeout(r, 5));
            console.warn('after await', job);
          },
        ),
      ),
    );
    console.log('outside');
    expect(got.sort()).toEqual([
      ['a', 'info', 'start a'],
      ['a', 'warn', 'after await a'],
      ['b', 'info', 'start b'],
      ['b', 'warn', 'after await b'],
    ]);
  });
});
