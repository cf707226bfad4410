import type { JobRecord } from '../../store/types.js';
import { openAiErrorBody, type OpenAiErrorBody } from './errors.js';
import { plainJson } from '../../core/raw-json.js';

/**
 * What an OpenAI-route job answers once terminal. COMPLETED: the worker's output (an OpenAI object; a list of
 * one, as aggregating workers return it, is unwrapped). An output `{error: {...}}` is the worker refusing the
 * request (400, or `error.status` when it is a 4xx). FAILED/TIMED_OUT/CANCELLED: 500/504/499-style errors.
 */
export function terminalAnswer(job: JobRecord): { status: number; json: unknown } {
  if (job.status === 'COMPLETED') {
    let out = plainJson(job.output);
    if (Array.isArray(out) && out.length === 1) out = out[0];
    const err = workerError(out);
    if (err) return err;
    return { status: 200, json: out ?? null };
  }
  return { status: job.status === 'TIMED_OUT' ? 504 : 500, json: failure(job) };
}

/** A worker's `{error: {message, ...}}` output as a client error. */
export function workerError(out: unknown): { status: number; json: OpenAiErrorBody } | undefined {
  if (typeof out !== 'object' || out === null || !('error' in out)) return undefined;
  const e = (out as { error: unknown }).error;
  if (typeof e !== 'object' || e === null) return undefined;
  const { message, code, param, status } = e as Record<string, unknown>;
  const st = typeof status === 'number' && status >= 400 && status < 500 ? status : 400;
  const body = openAiErrorBody(
    st,
    typeof message === 'string' ? message : JSON.stringify(e),
    typeof code === 'string' ? code : 'invalid_request',
    typeof param === 'string' ? param : null,
  );
  return { status: st, json: body };
}

/** The error body of a job that did not complete. */
export function failure(job: JobRecord): OpenAiErrorBody {
  if (job.status === 'CANCELLED') return openAiErrorBody(500, `job ${job.id} was cancelled`, 'job_cancelled');
  if (job.status === 'TIMED_OUT')
    return openAiErrorBody(504, `job ${job.id} timed out: ${job.error ?? ''}`.trim(), 'job_timed_out');
  return openAiErrorBody(500, `job ${job.id} failed: ${job.error ?? 'unknown error'}`, 'job_failed');
}

/**
 * The stream of a worker that answered a whole OpenAI object without yielding chunks: one chunk per choice built
 * from it (`chat.completion` -> `chat.completion.chunk` with the message as `delta`; `text_completion` as is).
 * Anything else has no streaming form: nothing.
 */
export function chunksOf(out: unknown): unknown[] {
  if (Array.isArray(out) && out.length === 1) out = out[0];
  if (typeof out !== 'object' || out === null) return [];
  const o = out as { object?: unknown; choices?: unknown; [k: string]: unknown };
  if (!Array.isArray(o.choices)) return [];
  if (o.object === 'text_completion') return [o];
  if (o.object !== 'chat.completion') return [];
  return o.choices.map((c: { index?: number; message?: unknown; finish_reason?: unknown }) => ({
    id: o['id'],
    object: 'chat.completion.chunk',
    created: o['created'],
    model: o['model'],
    choices: [{ index: c.index ?? 0, delta: c.message ?? {}, finish_reason: c.finish_reason ?? null }],
    ...(o['usage'] !== undefined ? { usage: o['usage'] } : {}),
  }));
}
