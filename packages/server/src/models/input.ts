import type { PublicModel } from './types.js';

/** Output formats public image models produce. */
export const OUTPUT_FORMATS = ['png', 'webp', 'jpeg'] as const;
/** Output formats public audio (text-to-speech) models produce. */
export const AUDIO_FORMATS = ['wav', 'mp3', 'ogg'] as const;
/** Output formats public video models produce. */
export const VIDEO_FORMATS = ['mp4', 'webp'] as const;
const SCHEDULERS = ['euler', 'ddim'] as const;

export type CheckedInput = { ok: true; input: Record<string, unknown> } | { ok: false; problems: string[] };

/** A field check (returns why a value is refused) carrying the JSON Schema that describes the same constraint. */
type Rule = ((v: unknown) => string | undefined) & { schema: Record<string, unknown> };
const rule = (schema: Record<string, unknown>, check: (v: unknown) => string | undefined): Rule =>
  Object.assign(check, { schema });

const shown = (v: unknown): string => {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return String(v);
};

const int = (min: number, max: number, multiple = 1): Rule =>
  rule({ type: 'integer', minimum: min, maximum: max, ...(multiple > 1 ? { multipleOf: multiple } : {}) }, (v) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return `must be a number (got ${shown(v)})`;
    if (!Number.isInteger(v)) return `must be a whole number (got ${shown(v)})`;
    if (v < min || v > max) return `must be from ${min} to ${max} (got ${v})`;
    if (v % multiple !== 0) return `must be a multiple of ${multiple} (got ${v})`;
    return undefined;
  });
const num = (min: number, max: number): Rule =>
  rule({ type: 'number', minimum: min, maximum: max }, (v) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) return `must be a number (got ${shown(v)})`;
    if (v < min || v > max) return `must be from ${min} to ${max} (got ${v})`;
    return undefined;
  });
const str = (min: number, max: number): Rule =>
  rule({ type: 'string', minLength: min, ...(max < Number.MAX_SAFE_INTEGER ? { maxLength: max } : {}) }, (v) => {
    if (typeof v !== 'string') return `must be a string (got ${shown(v)})`;
    if (v.length < min) return 'must not be empty';
    if (v.length > max) return `must be at most ${max} characters (got ${v.length})`;
    return undefined;
  });
const VOICE_RE = /^[A-Za-z0-9_+/-]+$/;
const voice: Rule = rule({ ...str(1, 64).schema, pattern: VOICE_RE.source }, (v) => {
  const why = str(1, 64)(v);
  if (why) return why;
  return VOICE_RE.test(v as string) ? undefined : `must be a voice name like "en-us" or "en-us+f3" (got ${shown(v)})`;
});
const oneOf = (values: readonly (string | number)[]): Rule =>
  rule({ enum: [...values] }, (v) =>
    values.includes(v as never)
      ? undefined
      : `must be one of ${values.map((x) => JSON.stringify(x)).join(', ')} (got ${shown(v)})`,
  );

interface Field {
  rule: Rule;
  required?: boolean;
  default?: unknown;
  /** Shown by the playground next to the field. */
  description?: string;
}

function fieldsOf(model: PublicModel): Record<string, Field> {
  const l = model.limits;
  if (model.kind === 'upscale') {
    return {
      image: { rule: str(1, Number.MAX_SAFE_INTEGER), required: true, description: 'Image URL or base64 data.' },
      scale: { rule: oneOf([2, 4]), default: 2 },
      output_format: { rule: oneOf(OUTPUT_FORMATS), default: 'png' },
    };
  }
  if (model.kind === 'audio') {
    return {
      text: { rule: str(1, l.maxTextChars), required: true, description: 'What to say.' },
      voice: { rule: voice, description: 'Voice name, e.g. en-us or en-us+f3.' },
      speed: { rule: num(0.5, 2), default: 1 },
      pitch: { rule: int(0, 99), default: 50 },
      output_format: { rule: oneOf(AUDIO_FORMATS), default: 'wav' },
    };
  }
  const size = int(l.minSize, l.maxSize, l.sizeMultiple);
  if (model.kind === 'video') {
    return {
      prompt: { rule: str(1, l.maxPromptChars), required: true, description: 'What the clip starts with.' },
      prompt_end: { rule: str(1, l.maxPromptChars), description: 'What the clip ends with (default: the prompt).' },
      negative_prompt: { rule: str(0, l.maxPromptChars) },
      frames: { rule: int(2, l.maxFrames), default: l.defaultFrames },
      fps: { rule: int(1, l.maxFps), default: l.defaultFps },
      width: { rule: size, default: l.defaultWidth },
      height: { rule: size, default: l.defaultHeight },
      num_inference_steps: { rule: int(1, l.maxSteps), default: l.defaultSteps },
      guidance: { rule: num(0, l.maxGuidance), default: l.defaultGuidance },
      seed: { rule: int(0, Number.MAX_SAFE_INTEGER), description: 'Same seed, same output.' },
      seed_end: { rule: int(0, Number.MAX_SAFE_INTEGER) },
      output_format: { rule: oneOf(VIDEO_FORMATS), default: 'mp4' },
      scheduler: { rule: oneOf(SCHEDULERS) },
    };
  }
  return {
    prompt: { rule: str(1, l.maxPromptChars), required: true, description: 'What to draw.' },
    negative_prompt: { rule: str(0, l.maxPromptChars), description: 'What to avoid.' },
    width: { rule: size, default: l.defaultWidth },
    height: { rule: size, default: l.defaultHeight },
    num_inference_steps: { rule: int(1, l.maxSteps), default: l.defaultSteps },
    guidance: { rule: num(0, l.maxGuidance), default: l.defaultGuidance },
    seed: { rule: int(0, Number.MAX_SAFE_INTEGER), description: 'Same seed, same output.' },
    output_format: { rule: oneOf(OUTPUT_FORMATS), default: 'png' },
    upscale: { rule: oneOf([2, 4]) },
    scheduler: { rule: oneOf(SCHEDULERS) },
  };
}

/**
 * Validates a public model's `input` and fills in defaults (so the worker and the cost formula see the same
 * values). Unknown fields are refused, so a typo (`steps`) is not silently ignored. Never throws.
 *
 * @example checkInput(model, { prompt: 'a red circle', width: 64 }) // { ok: true, input: { prompt, width: 64, height: 512, ... } }
 */
export function checkInput(model: PublicModel, input: Record<string, unknown>): CheckedInput {
  const fields = fieldsOf(model);
  const problems: string[] = [];
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(fields, key))
      problems.push(`unknown field "${key.slice(0, 40)}" (known: ${Object.keys(fields).join(', ')})`);
  }
  for (const [name, f] of Object.entries(fields)) {
    const v = Object.hasOwn(input, name) ? input[name] : undefined;
    if (v === undefined || v === null) {
      if (f.required) problems.push(`${name}: is required`);
      else if (f.default !== undefined) out[name] = f.default;
      continue;
    }
    const why = f.rule(v);
    if (why) problems.push(`${name}: ${why}`);
    else out[name] = v;
  }
  return problems.length ? { ok: false, problems } : { ok: true, input: out };
}

/**
 * JSON Schema (draft 2020-12) of a model's input, built from the same field rules `checkInput` applies (for the
 * playground and `GET /v2/_berth/catalog`).
 */
export function inputSchemaOf(model: PublicModel): Record<string, unknown> {
  const fields = Object.entries(fieldsOf(model));
  const properties = Object.fromEntries(
    fields.map(([name, f]) => [
      name,
      {
        ...f.rule.schema,
        ...(f.default !== undefined ? { default: f.default } : {}),
        ...(f.description ? { description: f.description } : {}),
      },
    ]),
  );
  const required = fields.filter(([, f]) => f.required).map(([name]) => name);
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties,
    required,
    additionalProperties: false,
  };
}
