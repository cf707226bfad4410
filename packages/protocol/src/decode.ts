import type { z } from 'zod';
import { fastAck, fastAssign, fastComplete, fastJobRequest, fastStream, isPlainJsonObject } from './fast-decode.js';
import { JobRequest } from './job.js';
import { ServerMessage, WorkerMessage } from './ws.js';

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; error: string; issues?: DecodeIssue[] };
export interface DecodeIssue {
  path: string;
  message: string;
}

/** Formats zod issues as `{path, message}` pairs (`path` dotted, `""` for the root). */
export function formatIssues(error: z.ZodError): DecodeIssue[] {
  return error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message }));
}

/**
 * Validates an already-parsed value against a schema. Never throws.
 *
 * @example const r = decode(JobRequest, body); if (!r.ok) return badRequest(r.error);
 */
export function decode<S extends z.ZodType>(schema: S, value: unknown): DecodeResult<z.infer<S>> {
  let parsed: ReturnType<S['safeParse']>;
  try {
    parsed = schema.safeParse(value) as ReturnType<S['safeParse']>;
  } catch (err) {
    return { ok: false, error: `validation failed: ${String(err)}` };
  }
  if (parsed.success) return { ok: true, value: parsed.data as z.infer<S> };
  const issues = formatIssues(parsed.error);
  const first = issues[0];
  const where = first?.path ? `${first.path}: ` : '';
  return { ok: false, error: first ? `${where}${first.message}` : 'invalid value', issues };
}

/** Parses JSON text and validates it. Never throws. */
export function decodeJson<S extends z.ZodType>(schema: S, text: string): DecodeResult<z.infer<S>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not valid JSON' };
  }
  return decode(schema, value);
}

/** Validates the body of POST /run or /runsync (`JobRequest`); a plain `{input}` body skips zod's walk. Never throws. */
export function decodeJobRequest(value: unknown): DecodeResult<JobRequest> {
  const fast = fastJobRequest(value);
  return fast ? { ok: true, value: fast } : decode(JobRequest, value);
}

/** Decodes one WebSocket text frame sent by a worker (`job.stream`, `job.complete` without zod's walk). Never throws. */
export function decodeWorkerMessage(text: string): DecodeResult<WorkerMessage> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not valid JSON' };
  }
  const fast = isPlainJsonObject(value) ? (fastStream(value) ?? fastComplete(value)) : undefined;
  return fast ? { ok: true, value: fast } : decode(WorkerMessage, value);
}

/** Decodes one WebSocket text frame sent by the server (`job.assign`, `job.ack` without zod's walk). Never throws. */
export function decodeServerMessage(text: string): DecodeResult<ServerMessage> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not valid JSON' };
  }
  const fast = isPlainJsonObject(value) ? (fastAssign(value) ?? fastAck(value)) : undefined;
  return fast ? { ok: true, value: fast } : decode(ServerMessage, value);
}
