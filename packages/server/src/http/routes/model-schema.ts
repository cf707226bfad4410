import { AUDIO_FORMATS, OUTPUT_FORMATS, VIDEO_FORMATS } from '../../models/input.js';
import type { PublicModel } from '../../models/types.js';

type Schema = Record<string, unknown>;
const SEED = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Same seed, same output.' };

/**
 * JSON Schema (draft 2020-12) of a public model's input, for the playground and `GET /v2/_berth/catalog`. It
 * describes what `models/input.ts` checks; the check itself stays the source of truth.
 */
export function modelInputSchema(model: PublicModel): Schema {
  const l = model.limits;
  const text = (max: number, description: string, min = 1): Schema => ({ type: 'string', minLength: min, maxLength: max, description });
  const size = (def: number): Schema => ({ type: 'integer', minimum: l.minSize, maximum: l.maxSize, multipleOf: l.sizeMultiple, default: def });
  const steps: Schema = { type: 'integer', minimum: 1, maximum: l.maxSteps, default: l.defaultSteps };
  const guidance: Schema = { type: 'number', minimum: 0, maximum: l.maxGuidance, default: l.defaultGuidance };
  let properties: Record<string, Schema>;
  let required: string[];
  if (model.kind === 'upscale') {
    properties = {
      image: { type: 'string', minLength: 1, description: 'Image URL or base64 data.' },
      scale: { enum: [2, 4], default: 2 },
      output_format: { enum: [...OUTPUT_FORMATS], default: 'png' },
    };
    required = ['image'];
  } else if (model.kind === 'audio') {
    properties = {
      text: text(l.maxTextChars, 'What to say.'),
      voice: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9_+/-]+$', description: 'Voice name, e.g. en-us or en-us+f3.' },
      speed: { type: 'number', minimum: 0.5, maximum: 2, default: 1 },
      pitch: { type: 'integer', minimum: 0, maximum: 99, default: 50 },
      output_format: { enum: [...AUDIO_FORMATS], default: 'wav' },
    };
    required = ['text'];
  } else if (model.kind === 'video') {
    properties = {
      prompt: text(l.maxPromptChars, 'What the clip starts with.'),
      prompt_end: text(l.maxPromptChars, 'What the clip ends with (default: the prompt).'),
      negative_prompt: text(l.maxPromptChars, 'What to avoid.', 0),
      frames: { type: 'integer', minimum: 2, maximum: l.maxFrames, default: l.defaultFrames },
      fps: { type: 'integer', minimum: 1, maximum: l.maxFps, default: l.defaultFps },
      width: size(l.defaultWidth),
      height: size(l.defaultHeight),
      num_inference_steps: steps,
      guidance,
      seed: SEED,
      seed_end: SEED,
      output_format: { enum: [...VIDEO_FORMATS], default: 'mp4' },
      scheduler: { enum: ['euler', 'ddim'] },
    };
    required = ['prompt'];
  } else {
    properties = {
      prompt: text(l.maxPromptChars, 'What to draw.'),
      negative_prompt: text(l.maxPromptChars, 'What to avoid.', 0),
      width: size(l.defaultWidth),
      height: size(l.defaultHeight),
      num_inference_steps: steps,
      guidance,
      seed: SEED,
      output_format: { enum: [...OUTPUT_FORMATS], default: 'png' },
      upscale: { enum: [2, 4] },
      scheduler: { enum: ['euler', 'ddim'] },
    };
    required = ['prompt'];
  }
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties, required, additionalProperties: false };
}
