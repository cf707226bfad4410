import { describe, expect, it } from 'vitest';
import type { ClusterMessage } from './types.js';
import { decodePayload, encodeLine, header, MAX_CHUNK_DATA } from './wire.js';

const job = {
  id: 'j1',
  endpointId: 'echo',
  status: 'COMPLETED',
  input: {},
  executionTimeout: 1,
  lowPriority: false,
  sync: true,
  attempt: 1,
  retries: 0,
  createdAt: 1,
  queuedAt: 1,
  expiresAt: 2,
} as const;
const payload = (from: string, msgs: ClusterMessage[]) => [header(from), ...msgs.map(encodeLine)].join('\n');
const all = () => true;

describe('cluster wire payloads', () => {
  it('round-trips every message kind, keys with tabs and newlines included', () => {
    const msgs: ClusterMessage[] = [
      { t: 'job', id: 'a\tb\nc', kind: 'chunk', data: { attempt: 2, seq: 5, chunks: ['x\ty', { n: 1 }] } },
      { t: 'job', id: 'j1', kind: 'change', job: { ...job } },
      { t: 'job', id: 'j2', kind: 'deleted' },
      { t: 'queued', endpointId: 'echo' },
      {
        t: 'presence',
        replica: 'r2',
        eps: {
          echo: { workers: { idle: 1, running: 0, initializing: 0, throttled: 0, unhealthy: 0 } as never, limit: 1 },
        },
      },
      { t: 'presence', replica: 'r2' },
      { t: 'stop', id: 'j3', attempt: 4, workerId: 'w1', reason: 'cancelled' },
    ];
    expect(decodePayload(payload('r2', msgs), header('r1'), all)).toEqual(msgs);
  });

  it("skips a replica's own payloads, and other replicas' events of jobs it does not watch, unparsed", () => {
    const msgs: ClusterMessage[] = [
      { t: 'job', id: 'mine', kind: 'change' },
      { t: 'job', id: 'other', kind: 'chunk', data: { attempt: 1, seq: 0, chunks: [1] } },
      { t: 'queued', endpointId: 'e' },
    ];
    expect(decodePayload(payload('r1', msgs), header('r1'), all)).toBeUndefined();
    const asked: string[] = [];
    const got = decodePayload(payload('r2', msgs), header('r1'), (id) => (asked.push(id), id === 'mine'));
    expect(got).toEqual([msgs[0], msgs[2]]);
    expect(asked).toEqual(['mine', 'other']);
    // A foreign payload with nothing for this replica (a hello) is still recognised as one: [] rather than undefined.
    expect(decodePayload([header('r2'), encodeLine({ t: 'hello' })].join('\n'), header('r1'), all)).toEqual([]);
  });

  it('sends oversized chunks and records as bare wake-ups; ignores malformed lines and other formats', () => {
    const big = 'x'.repeat(MAX_CHUNK_DATA + 1);
    const msgs: ClusterMessage[] = [
      { t: 'job', id: 'j', kind: 'chunk', data: { attempt: 1, seq: 0, chunks: [big] } },
      { t: 'job', id: 'j1', kind: 'change', job: { ...job, output: big } },
    ];
    expect(decodePayload(payload('r2', msgs), header('r1'), all)).toEqual([
      { t: 'job', id: 'j', kind: 'chunk' },
      { t: 'job', id: 'j1', kind: 'change' },
    ]);
    expect(decodePayload(`${header('r2')}\nj"j\t[oops\nq"e"\t[]`, header('r1'), all)).toEqual([
      { t: 'queued', endpointId: 'e' },
    ]);
    expect(decodePayload(JSON.stringify({ r: 'r2', m: [['q', 'e']] }), header('r1'), all)).toBeUndefined();
  });
});
