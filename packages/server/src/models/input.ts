import type { PublicModel } from './types.js';

/** Output formats public image models produce. */
export const OUTPUT_FORMATS = ['png', 'webp', 'jpeg'] as const;
/** Output formats public audio (text-to-speech) models produce. */
export const AUDIO_FORMATS = ['wav', 'mp3', 'ogg'] as const;
/** Output formats public video models produce. */
export const VIDEO_FORMATS = ['mp4', 'webp'] as const;
const SCHEDULERS = ['euler', 'ddim'] as const;

export type CheckedInput = { ok: true; input: Record<string, unknown> } | { ok: false; problems: string[] };

type Rule = (v: unknown) => string | undefined;

const shown = (v: unknown): string => {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return 'an object';
  return String(v);
};

const int = (min: number, max: number, multiple = 1): Rule => (v) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) return `must be a number (got ${shown(v)})`;
  if (!Number.isInteger(v)) return `must be a whole number (got ${shown(v)})`;
  if (v < min || v > max) return `must be from ${min} to ${max} (got ${v})`;
  if (v % multiple !== 0) return `must be a multiple of ${multiple} (got ${v})`;
  return undefined;
};
const num = (min: number, max: number): Rule => (v) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) return `must be a number (got ${shown(v)})`;
  if (v < min || v > max) return `must be from ${min} to ${max} (got ${v})`;
  return undefined;
};
const str = (min: number, max: number): Rule => (v) => {
  if (typeof v !== 'string') return `must be a string (got ${shown(v)})`;
  if (v.length < min) return 'must not be empty';
  if (v.length > max) return `must be at most ${max} characters (got ${v.length})`;
  return undefined;
};
const voice: Rule = (v) => {
  const why = str(1, 64)(v);
  if (why) return why;
  return /^[A-Za-z0-9_+/-]+$/.test(v as string) ? undefined : `must be a voice name like "en-us" or "en-us+f3" (got ${shown(v)})`;
};
const oneOf = (values: readonly (string | number)[]): Rule => (v) =>
  values.includes(v as never) ? undefined : `must be one of ${values.map((x) => JSON.stringify(x)).join(', ')} (got ${shown(v)})`;

interface Field {
  rule: Rule;
  required?: boolean;
  default?: unknown;
}

function fieldsOf(model: PublicModel): Record<string, Field> {
  const l = model.limits;
  if (model.kind === 'upscale') {
    return {
      image: { rule: str(1, Number.MAX_SAFE_INTEGER), required: true },
      scale: { rule: oneOf([2, 4]), default: 2 },
      output_format: { rule: oneOf(OUTPUT_FORMATS), default: 'png' },
    };
  }
  if (model.kind === 'audio') {
    return {
      text: { rule: str(1, l.maxTextChars), required: true },
      voice: { rule: voice },
      speed: { rule: num(0.5, 2), default: 1 },
      pitch: { rule: int(0, 99), default: 50 },
      output_format: { rule: oneOf(AUDIO_FORMATS), default: 'wav' },
    };
  }
  const size = int(l.minSize, l.maxSize, l.sizeMultiple);
  if (model.kind === 'video') {
    return {
      prompt: { rule: str(1, l.maxPromptChars), required: true },
      prompt_end: { rule: str(1, l.maxPromptChars) },
      negative_prompt: { rule: str(0, l.maxPromptChars) },
      frames: { rule: int(2, l.maxFrames), default: l.defaultFrames },
      fps: { rule: int(1, l.maxFps), default: l.defaultFps },
      width: { rule: size, default: l.defaultWidth },
      height: { rule: size, default: l.defaultHeight },
      num_inference_steps: { rule: int(1, l.maxSteps), default: l.defaultSteps },
      guidance: { rule: num(0, l.maxGuidance), default: l.defaultGuidance },
      seed: { rule: int(0, Number.MAX_SAFE_INTEGER) },
      seed_end: { rule: int(0, Number.MAX_SAFE_INTEGER) },
      output_format: { rule: oneOf(VIDEO_FORMATS), default: 'mp4' },
      scheduler: { rule: oneOf(SCHEDULERS) },
    };
  }
  return {
    prompt: { rule: str(1, l.maxPromptChars), required: true },
    negative_prompt: { rule: str(0, l.maxPromptChars) },
    width: { rule: size, default: l.defaultWidth },
    height: { rule: size, default: l.defaultHeight },
    num_inference_steps: { rule: int(1, l.maxSteps), default: l.defaultSteps },
    guidance: { rule: num(0, l.maxGuidance), default: l.defaultGuidance },
    seed: { rule: int(0, Number.MAX_SAFE_INTEGER) },
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
    if (!Object.hasOwn(fields, key)) problems.push(`unknown field "${key.slice(0, 40)}" (known: ${Object.keys(fields).join(', ')})`);
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
