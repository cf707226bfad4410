import { isTerminal } from '@berth/protocol';
import { armWaiter } from '../../jobs/job-events.js';
import { sseEvent } from '../sse-frame.js';
import { openAiErrorBody } from './errors.js';
import { chunksOf, failure, terminalAnswer, workerError } from './job-output.js';
import type { OpenAiContext } from './context.js';
import { plainJson } from '../../core/raw-json.js';
import { LEAN } from '../../jobs/job-service.js';

const KEEPALIVE_MS = 15_000;

/**
 * One stream chunk of the worker as SSE text. Objects become `data: <json>`; strings are taken as SSE the
 * worker already formatted (`data: ...`, as vLLM-style workers yield) or, otherwise, sent as one event whose data
 * is the string (a string of several lines as several `data:` lines, so the client reads it back whole).
 */
export function toSse(chunk: unknown): string {
  if (typeof chunk === 'string') {
    if (chunk.startsWith('data:') || chunk.startsWith('event:'))
      return chunk.endsWith('\n\n') ? chunk : `${chunk.replace(/\n*$/, '')}\n\n`;
    return sseEvent(chunk);
  }
  const err = workerError(chunk);
  return sseEvent(JSON.stringify(err ? err.json : chunk));
}

/**
 * The OpenAI event stream of a job: each worker chunk as it arrives (one per generated token), then
 * `data: [DONE]`. A job that fails ends with `data: {"error": {...}}`, which OpenAI clients raise. When the
 * client goes away before the job ends, the job is cancelled.
 */
export async function* openAiEvents(rc: OpenAiContext, jobId: string, first: unknown[] = []): AsyncGenerator<string> {
  const waiter = armWaiter(rc.service.events, jobId);
  let finished = false;
  let doneSent = false;
  let sentChunks = first.length > 0;
  try {
    if (first.length > 0) {
      const text = first.map(toSse).join('');
      if (text.includes('data: [DONE]')) doneSent = true;
      yield text;
    }
    const send = (chunks: unknown[]) => {
      sentChunks = true;
      const text = chunks.map(toSse).join('');
      if (text.includes('data: [DONE]')) doneSent = true;
      return text;
    };
    for (let read = true; ; ) {
      if (!read) {
        const ev = await waiter.wait(KEEPALIVE_MS, rc.req.signal);
        if (ev === 'aborted') return;
        if (ev === 'timeout') yield ': keep-alive\n\n';
        // Chunks that came with their events are sent as they are; anything else re-reads the job.
        const pushed = await rc.service.pushedChunks(jobId, waiter);
        read = pushed === undefined;
        if (pushed?.length) yield send(pushed);
        continue;
      }
      const job = await rc.service.get(rc.endpointId, jobId, LEAN).catch(() => undefined);
      if (!job) {
        finished = true;
        yield sseEvent(
          JSON.stringify(openAiErrorBody(500, `job ${jobId} was deleted before it finished`, 'job_not_found')),
        );
        return;
      }
      const chunks = await rc.service.takeStream(jobId);
      if (chunks.length > 0) yield send(chunks);
      if (isTerminal(job.status)) {
        finished = true;
        const refused = job.status === 'COMPLETED' ? terminalAnswer(job) : undefined;
        if (job.status !== 'COMPLETED') yield sseEvent(JSON.stringify(failure(job)));
        else if (refused && refused.status !== 200) yield sseEvent(JSON.stringify(refused.json));
        else {
          // A worker that answered the whole object without streaming it: its answer as chunks.
          if (!sentChunks) yield chunksOf(plainJson(job.output)).map(toSse).join('');
          if (!doneSent) yield sseEvent('[DONE]');
        }
        return;
      }
      read = false;
    }
  } finally {
    waiter.dispose();
    if (!finished) await cancelQuietly(rc, jobId, 'client closed the event stream');
  }
}

/** Cancels a job whose client went away; a job already terminal or deleted is left alone. */
export async function cancelQuietly(rc: OpenAiContext, jobId: string, why: string): Promise<void> {
  try {
    const job = await rc.service.get(rc.endpointId, jobId, LEAN);
    if (isTerminal(job.status)) return;
    await rc.service.cancel(rc.endpointId, jobId);
    rc.logger.info(`openai job cancelled: ${why}`, { jobId, endpointId: rc.endpointId });
  } catch {
    // deleted meanwhile: nothing to cancel
  }
}
