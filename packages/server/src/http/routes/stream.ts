import { BerthError, isTerminal, type StreamReply } from '@berth/protocol';
import { armWaiter } from '../../jobs/job-events.js';
import { toJobObject } from '../../store/job-view.js';
import type { JobRecord } from '../../store/types.js';
import { QUERY, intParam } from '../query.js';
import { SSE_HEADERS, sseEvent } from '../sse-frame.js';
import type { RouteContext } from './route-context.js';
import { resumableSse, streamCursor } from './stream-resume.js';
import { untilTokenEnds } from '../../tokens/token-stream.js';
import { LEAN } from '../../jobs/job-service.js';

const SSE_KEEPALIVE_MS = 15_000;

/**
 * GET|POST /stream/<id>: chunks not yet delivered to any reader. Long-polls (`?wait=`, default 5 s) until at
 * least one chunk exists or the job is terminal. With `Accept: text/event-stream`, pushes each chunk as an SSE
 * `message` event (`data: {"output": <chunk>}`) as it arrives, then one `done` event with the job object; with
 * `Last-Event-ID` or `?from=`, resumable events with ids instead (`stream-resume.ts`).
 */
export async function stream(rc: RouteContext) {
  const wait = intParam(rc.req.query, QUERY.streamWait);
  await rc.service.get(rc.endpointId, rc.jobId, LEAN);
  if (rc.registry.streams(rc.endpointId) === false) {
    throw new BerthError(
      'stream_not_supported',
      `the workers of endpoint ${rc.endpointId} do not stream: use a generator handler or return_aggregate_stream`,
    );
  }
  const token = rc.principal.jobToken;
  if ((rc.req.headers['accept'] ?? '').includes('text/event-stream')) {
    // A job token reads by position, from the first chunk no taking reader took, and never takes (the backend's
    // reader gets every chunk); its stream ends when the token does.
    const cursor = streamCursor(rc) ?? (token ? { attempt: 0, n: 0 } : undefined);
    const events = (r: RouteContext) => (cursor ? resumableSse(r, cursor) : sse(r));
    return {
      status: 200,
      headers: SSE_HEADERS,
      events: token && rc.tokens ? untilTokenEnds(rc, rc.tokens, token, events) : events(rc),
    };
  }
  if (token) return peek(rc, wait);
  const waiter = armWaiter(rc.service.events, rc.jobId);
  try {
    const deadline = performance.now() + wait;
    for (;;) {
      // Status first, then chunks: a job seen terminal has already stored all of its chunks.
      const job = await rc.service.get(rc.endpointId, rc.jobId, LEAN);
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
      if (ev !== 'chunk' || !job) job = await rc.service.get(rc.endpointId, rc.jobId, LEAN).catch(() => undefined);
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

/**
 * JSON `/stream` for a job token: the chunks no taking reader took yet, from position `?from=` (default 0: the
 * first one left), long-polling like `/stream`; nothing is taken. `next` is the `?from=` of the following call.
 */
async function peek(rc: RouteContext, wait: number) {
  const raw = rc.req.query.get('from') ?? '0';
  if (!/^\d{1,12}$/.test(raw))
    throw new BerthError('invalid_request', `query from must be a whole number of chunks, got "${raw.slice(0, 40)}"`);
  const from = Number(raw);
  const waiter = armWaiter(rc.service.events, rc.jobId);
  try {
    const deadline = performance.now() + wait;
    for (;;) {
      waiter.takeChunks(); // read back by position below
      const job = await rc.service.get(rc.endpointId, rc.jobId, LEAN);
      const slice = await rc.service.readStream(rc.jobId, from);
      const chunks = slice?.chunks ?? [];
      const left = deadline - performance.now();
      if (chunks.length > 0 || isTerminal(job.status) || left <= 0 || rc.req.signal?.aborted) {
        const reply: StreamReply & { next: number } = {
          id: job.id,
          status: job.status,
          stream: chunks.map((output) => ({ output })),
          next: (slice?.from ?? from) + chunks.length,
        };
        if (job.error !== undefined && isTerminal(job.status)) reply.error = job.error;
        return { status: 200, json: reply };
      }
      if ((await waiter.wait(left, rc.req.signal)) === 'aborted') continue;
    }
  } finally {
    waiter.dispose();
  }
}
