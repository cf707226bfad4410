import type { WorkerMessage } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../logger.js';
import { JobEntry } from './job-entry.js';

const log = createLogger({ level: 'silent' });
const assign = { type: 'job.assign' as const, id: 'j1', attempt: 2, input: {} };
const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

function setup(connected = true) {
  const sent: WorkerMessage[] = [];
  const link = { up: connected };
  const entry = new JobEntry(assign, (m) => link.up && sent.push(m) > 0, log);
  entry.state = 'running';
  return { sent, link, entry };
}

describe('JobEntry', () => {
  it('coalesces chunks of the same tick into one job.stream with the seq of the first', async () => {
    const { sent, entry } = setup();
    entry.chunk('a', 0);
    entry.chunk('b', 1);
    await tick();
    expect(sent).toEqual([{ type: 'job.stream', id: 'j1', attempt: 2, seq: 0, chunks: ['a', 'b'] }]);
  });

  it('holds later chunks one more turn, so those of the next turn join them', async () => {
    const { sent, entry } = setup();
    entry.chunk('a', 0);
    await tick();
    entry.chunk('b', 1);
    await tick();
    expect(sent).toHaveLength(1);
    entry.chunk('c', 2);
    await tick();
    expect(sent).toEqual([
      { type: 'job.stream', id: 'j1', attempt: 2, seq: 0, chunks: ['a'] },
      { type: 'job.stream', id: 'j1', attempt: 2, seq: 1, chunks: ['b', 'c'] },
    ]);
    entry.chunk('d', 3);
    entry.complete(['a', 'b', 'c', 'd']);
    expect(sent.slice(2)).toEqual([
      { type: 'job.stream', id: 'j1', attempt: 2, seq: 3, chunks: ['d'] },
      { type: 'job.complete', id: 'j1', attempt: 2, output: ['a', 'b', 'c', 'd'] },
    ]);
  });

  it('flushes pending chunks before progress and the result, keeping their order', () => {
    const { sent, entry } = setup();
    entry.chunk('a', 0);
    entry.progress(50);
    entry.chunk('b', 1);
    entry.complete(['a', 'b']);
    expect(sent.map((m) => m.type)).toEqual(['job.stream', 'job.progress', 'job.stream', 'job.complete']);
    expect(entry.delivered).toBe(true);
  });

  it('buffers while disconnected: merges chunk messages, keeps only the latest progress, sends in order later', async () => {
    const { sent, link, entry } = setup(false);
    entry.chunk('a', 0);
    await tick();
    entry.progress(1);
    entry.chunk('b', 1);
    await tick();
    entry.progress(2);
    entry.complete('done');
    expect(sent).toEqual([]);
    expect(entry.delivered).toBe(false);
    link.up = true;
    entry.flush();
    expect(sent).toEqual([
      { type: 'job.stream', id: 'j1', attempt: 2, seq: 0, chunks: ['a', 'b'] },
      { type: 'job.progress', id: 'j1', attempt: 2, progress: 2 },
      { type: 'job.complete', id: 'j1', attempt: 2, output: 'done' },
    ]);
    expect(entry.delivered).toBe(true);
  });

  it('after cancel sends nothing but job.fail with aborted', async () => {
    const { sent, entry } = setup();
    entry.chunk('a', 0);
    entry.cancel('cancelled by the control plane (cancelled)');
    expect(entry.aborter.aborted).toBe(true);
    expect(entry.aborter.signal.aborted).toBe(true); // made after the cancel: aborted at once
    entry.chunk('b', 1);
    entry.progress(3);
    await tick();
    entry.complete('x');
    expect(sent).toEqual([{ type: 'job.fail', id: 'j1', attempt: 2, error: 'cancelled', aborted: true }]);
  });

  it('cancel of a queued job fails it at once; of a buffered result replaces it with an aborted fail', () => {
    const q = setup();
    q.entry.state = 'queued';
    q.entry.cancel('stale');
    expect(q.sent).toEqual([{ type: 'job.fail', id: 'j1', attempt: 2, error: 'stale', aborted: true }]);
    expect(q.entry.state).toBe('finished');

    const b = setup(false);
    b.entry.complete('result');
    b.entry.cancel('stale');
    b.link.up = true;
    b.entry.flush();
    expect(b.sent).toEqual([{ type: 'job.fail', id: 'j1', attempt: 2, error: 'stale', aborted: true }]);
  });
});
