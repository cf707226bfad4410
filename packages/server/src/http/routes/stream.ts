import { BerthError, isTerminal, type StreamReply } from '@berth/protocol';
import { armWaiter } from '../../jobs/job-events.js';
import { toJobObject } from '../../jobs/job-view.js';
import type { JobRecord } from '../../store/types.js';
import { QUERY, intParam } from '../query.js';
import { SSE_HEADERS, sseEvent } from '../sse-frame.js';
import type { RouteContext } from './route-context.js';
import { resumableSse, streamCursor } from './stream-resume.js';

const SSE_KEEPALIVE_MS = 15_000;

/**
 * GET|POST /stream/<id>: chunks not yet delivered to any reader. Long-polls (`?wait=`, default 5 s) until at
 * least one chunk exists or the job is terminal. With `Accept: text/event-stream`, pushes each chunk as an SSE
 * `message` event (`data: {"output": <chunk>}`) as it arrives, then one `done` event with the job object; with
 * `Last-Event-ID` or `?from=`, resumable events with ids instead (`stream-resume.ts`).
 */
export async function stream(rc: RouteContext) {
  const wait = intParam(rc.req.query, QUERY.streamWait);
  await rc.service.get(rc.endpointId, rc.jobId);
  if (rc.registry.streams(rc.endpointId) === false) {
    throw new BerthError(
      'stream_not_supported',
      `the workers of endpoint ${rc.endpointId} do not stream: use a generator handler or return_aggregate_stream`,
    );
  }
  if ((rc.req.headers['accept'] ?? '').includes('text/event-stream')) {
    const cursor = streamCursor(rc);
    return { status: 200, headers: SSE_HEADERS, events: cursor ? resumableSse(rc, cursor) : sse(rc) };
  }
  const waiter = armWaiter(rc.service.events, rc.jobId);
  try {
    const deadline = performance.now() + wait;
    for (;;) {
      // Status first, then chunks: a job seen terminal has already stored all of its chunks.
      const job = await rc.service.get(rc.endpointId, rc.jobId);
      // A client that has gone must not consume chunks (taking marks them delivered): leave them for the next reader.
      if (rc.req.signal?.aborted) return { status: 200, json: { id: job.id, status: job.status, stream: [] } };
      const chunks = await rc.service.takeStream(rc.jobId);
      const left = deadline - performance.now();
      if (chunks.length > 0 || isTerminal(job.status) || left <= 0) {
        const reply: StreamReply = { id: job.id, status: job.status, stream: chunks.map((output) => ({ output })) };
        if (job.error !== undefined && isTerminal(job.status)) reply.error = job.error;
        return { status: 200, json: reply };
      }
      if ((await waiter.wait(left, rc.req.signal)) === 'aborted')
        return { status: 200, json: { id: job.id, status: job.status, stream: [] } };
    }
  } finally {
    waiter.dispose();
  }
}

async function* sse(rc: RouteContext): AsyncGenerator<string> {
  const waiter = armWaiter(rc.service.events, rc.jobId);
  const data = (chunks: unknown[]) => chunks.map((output) => sseEvent(JSON.stringify({ output }))).join('');
  let job: JobRecord | undefined;
  let ev: Awaited<ReturnType<typeof waiter.wait>> | undefined;
  try {
    for (;;) {
      // Woken by 'chunk' only: the status is unchanged (every status change emits 'change'), take the chunks
      // without re-reading the job (on SQLite the take then joins the append's commit).
      if (ev !== 'chunk' || !job) job = await rc.service.get(rc.endpointId, rc.jobId).catch(() => undefined);
      if (!job) {
        yield sseEvent(JSON.stringify({ error: `job ${rc.jobId} was deleted`, code: 'job_not_found' }), 'error');
        return;
      }
      if (rc.req.signal?.aborted) return; // a client that has gone takes no chunks: they stay for the next reader
      const chunks = await rc.service.takeStream(rc.jobId);
      if (chunks.length > 0) yield data(chunks);
      if (isTerminal(job.status)) {
        yield sseEvent(JSON.stringify(toJobObject(job)), 'done');
        return;
      }
      // Chunks that came with their events (PostgreSQL) are delivered as they are, without a read.
      for (;;) {
        ev = await waiter.wait(SSE_KEEPALIVE_MS, rc.req.signal);
        if (ev === 'aborted') return;
        if (ev === 'timeout') yield ': keep-alive\n\n';
        const pushed = await rc.service.pushedChunks(rc.jobId, waiter);
        if (pushed === undefined) break;
        if (pushed.length) yield data(pushed);
      }
    }
  } finally {
    waiter.dispose();
  }
}
