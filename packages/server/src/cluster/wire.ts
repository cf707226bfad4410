import type { ClusterMessage } from './types.js';
import type { PresenceSnapshot } from './presence.js';
import type { JobRecord } from '../store/types.js';

/**
 * The NOTIFY payload between replicas. One payload carries the messages of one event-loop turn, one per line:
 *
 *     <sender replica id as a JSON string>
 *     <tag><key as a JSON string>\t<JSON array: the rest>
 *
 * Tags: `j` job event (key: the job id), `q` jobs queued (key: the endpoint), `p` presence (key: the replica),
 * `x` stop an attempt (key: the job id), `h` hello. Every replica receives every payload, its own included: the
 * header lets a replica drop its own without parsing, and the key lets it drop the job events of jobs it has no
 * waiter for (most of them, with several replicas) without parsing their chunks or records. JSON strings hold no
 * raw tab or newline, so both split the text unambiguously.
 */

/** Chunks (or a job record) larger than this (JSON) go as a bare wake-up: the readers read the store. */
export const MAX_CHUNK_DATA = 6_000;
const KIND = { change: 'c', chunk: 's', deleted: 'd' } as const;
const KIND_OF = { c: 'change', s: 'chunk', d: 'deleted' } as const;

/** One message as a payload line. */
export function encodeLine(m: ClusterMessage | { t: 'hello' }): string {
  switch (m.t) {
    case 'job': {
      const key = `j${JSON.stringify(m.id)}\t`;
      if (m.data) {
        const chunks = JSON.stringify(m.data.chunks);
        if (chunks !== undefined && chunks.length <= MAX_CHUNK_DATA)
          return `${key}["${KIND[m.kind]}",${m.data.seq},${chunks},${m.data.attempt}]`;
      }
      if (m.job) {
        const job = JSON.stringify(m.job);
        if (job.length <= MAX_CHUNK_DATA) return `${key}["${KIND[m.kind]}",${job}]`;
      }
      return `${key}["${KIND[m.kind]}"]`;
    }
    case 'queued':
      return `q${JSON.stringify(m.endpointId)}\t[]`;
    case 'presence':
      return `p${JSON.stringify(m.replica)}\t${m.eps ? JSON.stringify([m.eps]) : '[]'}`;
    case 'stop':
      return `x${JSON.stringify(m.id)}\t${JSON.stringify([m.attempt, m.workerId, m.reason])}`;
    default:
      return 'h""\t[]';
  }
}

/** The payload header of a sender. */
export const header = (replicaId: string): string => JSON.stringify(replicaId);

/**
 * The messages of a payload, or `undefined` when it is this replica's own (`self`: its header) or not in this
 * format. `wants(jobId)`: whether job events of that job concern this replica; the others are skipped unparsed.
 * A foreign payload whose messages were all skipped gives `[]` (it still proves that its sender listens).
 */
export function decodePayload(
  payload: string,
  self: string,
  wants: (jobId: string) => boolean,
): ClusterMessage[] | undefined {
  const nl = payload.indexOf('\n');
  const head = nl < 0 ? payload : payload.slice(0, nl);
  if (head === self || head.charCodeAt(0) !== 34 /* " */) return undefined;
  const out: ClusterMessage[] = [];
  let at = nl;
  while (at >= 0 && at < payload.length) {
    const end = payload.indexOf('\n', at + 1);
    const line = payload.slice(at + 1, end < 0 ? undefined : end);
    at = end;
    const tab = line.indexOf('\t');
    if (tab < 2) continue;
    try {
      const key = JSON.parse(line.slice(1, tab)) as unknown;
      if (typeof key !== 'string') continue;
      if (line[0] === 'j' && !wants(key)) continue;
      const m = decodeRest(line[0]!, key, JSON.parse(line.slice(tab + 1)) as unknown[]);
      if (m) out.push(m);
    } catch {
      // a malformed line (another version?): skipped; messages are wake-ups, the pump and the sweep catch up
    }
  }
  return out;
}

function decodeRest(tag: string, key: string, a: unknown[]): ClusterMessage | undefined {
  if (!Array.isArray(a)) return undefined;
  if (tag === 'j') {
    const [k, x, y, z] = a as [unknown, unknown, unknown, unknown];
    if (k !== 'c' && k !== 's' && k !== 'd') return undefined;
    const kind = KIND_OF[k];
    if (typeof x === 'number' && Array.isArray(y) && typeof z === 'number')
      return { t: 'job', id: key, kind, data: { attempt: z, seq: x, chunks: y } };
    if (x !== null && typeof x === 'object' && (x as JobRecord).id === key)
      return { t: 'job', id: key, kind, job: x as JobRecord };
    return { t: 'job', id: key, kind };
  }
  if (tag === 'q') return { t: 'queued', endpointId: key };
  if (tag === 'p')
    return a[0] !== null && typeof a[0] === 'object'
      ? { t: 'presence', replica: key, eps: a[0] as PresenceSnapshot }
      : { t: 'presence', replica: key };
  if (tag === 'x' && typeof a[0] === 'number' && typeof a[1] === 'string')
    return { t: 'stop', id: key, attempt: a[0], workerId: a[1], reason: a[2] as 'cancelled' };
  return undefined;
}
