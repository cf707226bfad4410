/**
 * Reading a job's generation settings. The same fields serve the OpenAI route (`openai_input`) and plain `/run`
 * inputs: `max_tokens` (or `max_completion_tokens`), `temperature`, `top_p`, `stop`, `seed`, `n`.
 */

/** A bad request field; the OpenAI route answers it as a 400 naming `param`. */
export class InputError extends Error {
  override readonly name = 'InputError';
  constructor(
    readonly param: string,
    message: string,
    readonly code = 'invalid_request',
  ) {
    super(`${param}: ${message}`);
  }
}

export interface SamplingSettings {
  /** Undefined: up to the context length (chat) or the route's default. */
  maxTokens: number | undefined;
  temperature: number;
  topP: number;
  stop: string[];
  /** Undefined: a random seed per request. */
  seed: number | undefined;
  n: number;
}

/** OpenAI's defaults: temperature 1, top_p 1, n 1. */
export const DEFAULTS = { temperature: 1, topP: 1, n: 1 } as const;
export const MAX_N = 16;

type Body = Record<string, unknown>;

function num(b: Body, key: string, min: number, max: number, int: boolean): number | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max || (int && !Number.isInteger(v))) {
    throw new InputError(
      key,
      `must be a ${int ? 'whole number' : 'number'} from ${min} to ${max} (got ${JSON.stringify(v)})`,
    );
  }
  return v;
}

export function readSettings(b: Body): SamplingSettings {
  const topP = num(b, 'top_p', 0, 1, false);
  if (topP === 0) throw new InputError('top_p', 'must be above 0');
  const stopRaw = b['stop'];
  let stop: string[] = [];
  if (typeof stopRaw === 'string') stop = [stopRaw];
  else if (Array.isArray(stopRaw)) stop = stopRaw.filter((s): s is string => typeof s === 'string' && s !== '');
  else if (stopRaw !== undefined && stopRaw !== null)
    throw new InputError('stop', 'must be a string or an array of strings');
  return {
    maxTokens: num(b, 'max_completion_tokens', 1, 1e6, true) ?? num(b, 'max_tokens', 1, 1e6, true),
    temperature: num(b, 'temperature', 0, 2, false) ?? DEFAULTS.temperature,
    topP: topP ?? DEFAULTS.topP,
    stop: stop.slice(0, 4),
    seed: num(b, 'seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, true),
    n: num(b, 'n', 1, MAX_N, true) ?? DEFAULTS.n,
  };
}

export interface ChatMessage {
  role: string;
  content: string;
}

/** `messages` as `{role, content}` strings (text parts joined). */
export function readMessages(v: unknown): ChatMessage[] {
  if (!Array.isArray(v) || v.length === 0)
    throw new InputError('messages', 'must be a non-empty array of {"role", "content"} objects');
  return v.map((m: unknown, i) => {
    const role = (m as Body | null)?.['role'];
    const content = (m as Body | null)?.['content'];
    if (typeof role !== 'string') throw new InputError(`messages[${i}].role`, 'must be a string');
    if (typeof content === 'string') return { role, content };
    if (content === undefined || content === null) return { role, content: '' };
    if (Array.isArray(content))
      return { role, content: content.map((p: Body) => (typeof p?.['text'] === 'string' ? p['text'] : '')).join('') };
    throw new InputError(`messages[${i}].content`, 'must be a string or an array of text parts');
  });
}
