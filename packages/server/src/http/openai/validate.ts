import { BerthError, describeValue } from '@berth/protocol';

/**
 * Checks the fields of an OpenAI request that Berth and its workers act on; every other field passes through
 * to the worker untouched. A bad field is a 400 `invalid_request` naming it in `param`.
 */
type Body = Record<string, unknown>;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
/** Most completions one request may ask for. */
export const MAX_N = 16;
const MAX_STOP = 4;

function bad(param: string, message: string): never {
  throw new BerthError('invalid_request', `${param}: ${message}`, { param });
}

function optInt(b: Body, key: string, min: number, max: number): void {
  const v = b[key];
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    bad(key, `must be a whole number from ${min} to ${max} (got ${describeValue(v)})`);
}

function optNumber(b: Body, key: string, min: number, max: number, minExclusive = false): void {
  const v = b[key];
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isFinite(v) || v > max || v < min || (minExclusive && v === min)) {
    bad(
      key,
      `must be a number ${minExclusive ? 'above' : 'from'} ${min}${minExclusive ? ' and at most' : ' to'} ${max} (got ${describeValue(v)})`,
    );
  }
}

function optBool(b: Body, key: string): void {
  const v = b[key];
  if (v !== undefined && v !== null && typeof v !== 'boolean')
    bad(key, `must be true or false (got ${describeValue(v)})`);
}

/** Checks what chat and text completions share. */
function common(b: Body): void {
  if (typeof b['model'] !== 'string' || b['model'] === '')
    bad('model', `must be a model id string (got ${describeValue(b['model'])}); GET /models lists them`);
  optInt(b, 'max_tokens', 1, 1_000_000);
  optInt(b, 'max_completion_tokens', 1, 1_000_000);
  optNumber(b, 'temperature', 0, 2);
  optNumber(b, 'top_p', 0, 1, true);
  optInt(b, 'n', 1, MAX_N);
  optInt(b, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  optNumber(b, 'presence_penalty', -2, 2);
  optNumber(b, 'frequency_penalty', -2, 2);
  optBool(b, 'stream');
  const so = b['stream_options'];
  if (so !== undefined && so !== null) {
    if (typeof so !== 'object' || Array.isArray(so))
      bad('stream_options', `must be an object like {"include_usage": true} (got ${describeValue(so)})`);
    if (b['stream'] !== true) bad('stream_options', 'is only allowed when stream is true');
    optBool(so as Body, 'include_usage');
  }
  const stop = b['stop'];
  if (stop !== undefined && stop !== null) {
    const list = typeof stop === 'string' ? [stop] : stop;
    if (!Array.isArray(list) || list.length > MAX_STOP || list.some((s) => typeof s !== 'string' || s === '')) {
      bad(
        'stop',
        `must be a non-empty string or an array of up to ${MAX_STOP} non-empty strings (got ${describeValue(stop)})`,
      );
    }
  }
}

function content(v: unknown, param: string, required: boolean): void {
  if (typeof v === 'string') return;
  if ((v === undefined || v === null) && !required) return;
  if (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every(
      (p) =>
        typeof p === 'object' &&
        p !== null &&
        (p as Body)['type'] === 'text' &&
        typeof (p as Body)['text'] === 'string',
    )
  )
    return;
  bad(param, `must be a string or an array of {"type": "text", "text": "..."} parts (got ${describeValue(v)})`);
}

/** `POST /chat/completions`: `messages` is a non-empty array of `{role, content}`. */
export function validateChat(b: Body): void {
  const messages = b['messages'];
  if (!Array.isArray(messages) || messages.length === 0)
    bad('messages', `must be a non-empty array of {"role", "content"} objects (got ${describeValue(messages)})`);
  messages.forEach((m: unknown, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m))
      bad(`messages[${i}]`, `must be an object like {"role": "user", "content": "..."} (got ${describeValue(m)})`);
    const role = (m as Body)['role'];
    if (typeof role !== 'string' || !ROLES.has(role))
      bad(`messages[${i}].role`, `must be one of ${[...ROLES].join(', ')} (got ${describeValue(role)})`);
    // An assistant message may carry tool calls instead of content.
    content((m as Body)['content'], `messages[${i}].content`, role !== 'assistant');
  });
  common(b);
}

/** `POST /completions`: `prompt` is a string (or an array of exactly one string). */
export function validateCompletion(b: Body): void {
  const p = b['prompt'];
  const ok = typeof p === 'string' || (Array.isArray(p) && p.length === 1 && typeof p[0] === 'string');
  if (!ok) bad('prompt', `must be a string (got ${describeValue(p)})`);
  optBool(b, 'echo');
  common(b);
}
