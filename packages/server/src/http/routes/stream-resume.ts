import { BerthError, isTerminal } from '@berth/protocol';
import { sseEvent } from '../sse-frame.js';
import { armWaiter } from '../../jobs/job-events.js';
import { toJobObject } from '../../store/job-view.js';
import type { RouteContext } from './route-context.js';
import { LEAN } from '../../jobs/job-service.js';

/** Where a resumable reader stands: the attempt its chunks belong to and how many of them it has (`<attempt>.<n>`). */
interface Cursor {
  attempt: number;
  n: number;
}

/**
 * The cursor of a resumable `/stream` SSE request: the `Last-Event-ID` header (sent on reconnect), else `?from=`
 * (`0`, or an event id). `undefined`: neither, the request takes chunks as before.
 */
export function streamCursor(rc: RouteContext): Cursor | undefined {
  const raw = rc.req.headers['last-event-id'] ?? rc.req.query.get('from') ?? undefined;
  if (raw === undefined) return undefined;
  if (raw === '0' || raw === '') return { attempt: 0, n: 0 };
  const m = /^(\d{1,9})\.(\d{1,12})$/.exec(raw);
  if (!m)
    throw new BerthError(
      'invalid_request',
      `Last-Event-ID / ?from= must be 0 or an event id <attempt>.<index> of this stream, got "${raw.slice(0, 40)}"`,
    );
  return { attempt: Number(m[1]), n: Number(m[2]) };
}

const KEEPALIVE_MS = 15_000;

/**
 * Server-sent events for a reader that keeps its own position: every chunk event carries `id: <attempt>.<n>` (n:
 * chunks of that attempt up to and including this one), and chunks are read by position (`Store.readStream`),
 * never taken, so a reader that reconnects with the last id it saw gets exactly the chunks after it: none lost in a
 * dropped connection, none repeated. A job requeued to a new attempt streams that attempt's chunks from its start.
 */
export async function* resumableSse(rc: RouteContext, from: Cursor): AsyncGenerator<string> {
  const waiter = armWaiter(rc.service.events, rc.jobId);
  let { attempt, n } = from;
  try {
    for (;;) {
      waiter.takeChunks(); // chunks are read back by position: the events' copies are not needed
      const job = await rc.service.get(rc.endpointId, rc.jobId, LEAN).catch(() => undefined);
      if (job && job.attempt !== attempt) [attempt, n] = [job.attempt, 0];
      const slice = job && (await rc.service.readStream(rc.jobId, n));
      if (!job || !slice) {
        yield sseEvent(JSON.stringify({ error: `job ${rc.jobId} was deleted`, code: 'job_not_found' }), 'error');
        return;
      }
      if (rc.req.signal?.aborted) return;
      if (slice.attempt !== attempt) continue; // a new attempt began between the two reads: read it from its start
      n = slice.from; // past `n` only when a taking reader (no cursor) took and dropped chunks first
      let out = '';
      for (const output of slice.chunks) out += sseEvent(JSON.stringify({ output }), undefined, `${attempt}.${++n}`);
      if (out) yield out;
      if (isTerminal(job.status)) {
        yield sseEvent(JSON.stringify(toJobObject(job)), 'done');
        return;
      }
      const ev = await waiter.wait(KEEPALIVE_MS, rc.req.signal);
      if (ev === 'aborted') return;
      if (ev === 'timeout') yield ': keep-alive\n\n';
    }
  } finally {
    waiter.dispose();
  }
}
