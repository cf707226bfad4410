import { BerthApiError, BerthConnectionError } from './errors.js';
import { readEvents } from './sse.js';
import { backoff, call, sleep, type Transport } from './transport.js';
import { TERMINAL, type Job, type JobStatus } from './types.js';

/** Options of `stream(id, options)`. */
export interface StreamOptions {
  signal?: AbortSignal;
  /**
   * ms without any byte (chunk or the server's 15 s keep-alive) after which the connection counts as dead and is
   * reopened where it left off. Default `45000`.
   */
  idleTimeoutMs?: number;
}

/**
 * The job's output chunks over server-sent events, in order; the generator's return value is the final job object.
 * A dropped connection is reopened with `Last-Event-ID` (docs/api.md "Resuming a dropped SSE connection"): no chunk
 * is lost or repeated. A server answering JSON instead (RunPod) is polled on `/stream` (each chunk goes to one
 * reader there). Reconnects count against `retry.retries` only while no chunk arrives in between.
 */
export async function* streamJob<C, O>(
  t: Transport,
  base: string,
  jobId: string,
  o: StreamOptions = {},
): AsyncGenerator<C, Job<O>, undefined> {
  let lastId: string | undefined;
  let failures = 0;
  for (;;) {
    const ctl = new AbortController();
    const stop = () => ctl.abort(o.signal?.reason);
    o.signal?.addEventListener('abort', stop, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const alive = () => {
      clearTimeout(idle);
      idle = setTimeout(() => ctl.abort(new Error('idle')), o.idleTimeoutMs ?? 45_000);
    };
    try {
      alive();
      const res = await call(t, `${base}/stream/${jobId}?from=0`, {
        headers: { accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
        signal: ctl.signal,
      });
      if (!res.headers.get('content-type')?.includes('text/event-stream')) {
        const reply = (await res.json()) as { status: JobStatus; stream?: { output: C }[] };
        for (const c of reply.stream ?? []) yield c.output;
        if (TERMINAL.includes(reply.status))
          return (await (await call(t, `${base}/status/${jobId}`, { signal: o.signal })).json()) as Job<O>;
        continue;
      }
      for await (const ev of readEvents(res.body!)) {
        alive();
        if (ev.event === 'message') {
          if (ev.id) lastId = ev.id;
          failures = 0;
          clearTimeout(idle); // a slow consumer is not a dead connection
          yield (JSON.parse(ev.data) as { output: C }).output;
          alive();
        } else if (ev.event === 'done') return JSON.parse(ev.data) as Job<O>;
        else if (ev.event === 'error') {
          const e = JSON.parse(ev.data) as { error: string; code: string };
          throw new BerthApiError(404, e.code, e.error);
        }
      }
    } catch (e) {
      if (o.signal?.aborted) throw o.signal.reason;
      if (!(e instanceof TypeError || ctl.signal.aborted || e instanceof BerthConnectionError)) throw e;
    } finally {
      clearTimeout(idle);
      o.signal?.removeEventListener('abort', stop);
      ctl.abort();
    }
    // The connection ended before the `done` event: reopen it where it left off.
    if (++failures > t.retry.retries) throw new BerthConnectionError(`stream of job ${jobId} kept dropping`);
    await sleep(backoff(t.retry, failures - 1), o.signal);
  }
}
