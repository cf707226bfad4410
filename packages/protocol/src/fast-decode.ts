import type { JobRequest } from './job.js';
import type { AckMessage, AssignMessage, CompleteMessage, StreamMessage } from './ws.js';
import type { z } from 'zod';

/**
 * Hand-written checks for the messages every job carries (a plain `{input}` body, `job.assign`, `job.complete`,
 * `job.ack`, and `job.stream`, one per streamed batch of chunks): each returns exactly what the zod schema returns for that shape (same keys, same order, a new
 * object, unknown keys dropped where zod drops them), or undefined for anything else, which then goes through
 * zod (and its error messages) as before. zod's generic walk was a visible share of the per-job CPU.
 * `decode.test.ts` compares both on every shape.
 */

export const isPlainJsonObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isJobId = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= 200;
const isAttempt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/** Keys of a job request that need zod's checks (and `__proto__`, which zod treats its own way). */
const REQUEST_SLOW_KEYS = new Set(['webhook', 'policy', 's3Config', 'webhookEvents', 'token', '__proto__']);

/** A job request with only `input` (and unknown keys, kept as zod's loose object keeps them). */
export function fastJobRequest(v: unknown): JobRequest | undefined {
  if (!isPlainJsonObject(v) || !isPlainJsonObject(v['input'])) return undefined;
  const out: Record<string, unknown> = { input: v['input'] };
  for (const k of Object.keys(v)) {
    if (REQUEST_SLOW_KEYS.has(k)) return undefined;
    if (k !== 'input') out[k] = v[k];
  }
  return out as JobRequest;
}

/** `job.complete` (the worker's result). */
export function fastComplete(v: Record<string, unknown>): z.infer<typeof CompleteMessage> | undefined {
  if (
    v['type'] !== 'job.complete' ||
    !isJobId(v['id']) ||
    !isAttempt(v['attempt']) ||
    !('output' in v) ||
    v['output'] === undefined ||
    'outputBlob' in v // a blob reference: zod checks it
  )
    return undefined;
  return { type: 'job.complete', id: v['id'], attempt: v['attempt'], output: v['output'] };
}

/** `job.stream` (a batch of stream chunks; a token-streaming job sends one every few tokens). */
export function fastStream(v: Record<string, unknown>): z.infer<typeof StreamMessage> | undefined {
  const { seq, chunks } = v;
  if (
    v['type'] !== 'job.stream' ||
    !isJobId(v['id']) ||
    !isAttempt(v['attempt']) ||
    typeof seq !== 'number' ||
    !Number.isSafeInteger(seq) ||
    seq < 0 ||
    !Array.isArray(chunks) ||
    chunks.length === 0
  )
    return undefined;
  return { type: 'job.stream', id: v['id'], attempt: v['attempt'], seq, chunks: chunks as unknown[] };
}

/** `job.assign` without `s3Config` (the server's dispatch). */
export function fastAssign(v: Record<string, unknown>): z.infer<typeof AssignMessage> | undefined {
  if (
    v['type'] !== 'job.assign' ||
    !isJobId(v['id']) ||
    !isAttempt(v['attempt']) ||
    !isPlainJsonObject(v['input']) ||
    's3Config' in v ||
    'inputBlob' in v // a blob reference: zod checks it
  )
    return undefined;
  const out: z.infer<typeof AssignMessage> = {
    type: 'job.assign',
    id: v['id'],
    attempt: v['attempt'],
    input: v['input'],
  };
  const deadline = v['deadline'];
  if (deadline !== undefined) {
    if (typeof deadline !== 'number' || !Number.isSafeInteger(deadline)) return undefined;
    out.deadline = deadline;
  }
  const traceparent = v['traceparent'];
  if (traceparent !== undefined) {
    if (typeof traceparent !== 'string' || traceparent.length > 256) return undefined; // zod's check says why
    out.traceparent = traceparent;
  }
  const batchId = v['batchId'];
  if (batchId !== undefined) {
    if (typeof batchId !== 'string' || batchId.length > 100) return undefined; // zod's check says why
    out.batchId = batchId;
  }
  return out;
}

/** `job.ack` (a result is stored). */
export function fastAck(v: Record<string, unknown>): z.infer<typeof AckMessage> | undefined {
  if (v['type'] !== 'job.ack' || !isJobId(v['id']) || !isAttempt(v['attempt'])) return undefined;
  return { type: 'job.ack', id: v['id'], attempt: v['attempt'] };
}
