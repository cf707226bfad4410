import { z } from 'zod';
import { MAX_SEED } from '../noise/gaussian.js';
import { VIDEO_FORMATS } from './encode-video.js';

const got = (i: { input: unknown }): string =>
  typeof i.input === 'string'
    ? JSON.stringify(i.input.slice(0, 40))
    : i.input === undefined
      ? 'nothing'
      : (JSON.stringify(i.input) ?? String(i.input));
const int = (min: number, max: number) =>
  z
    .number({ error: (i) => `must be a number (got ${got(i)})` })
    .int({ error: (i) => `must be a whole number (got ${got(i)})` })
    .min(min, { error: (i) => `must be at least ${min} (got ${got(i)})` })
    .max(max, { error: (i) => `must be at most ${max} (got ${got(i)})` });
const text = (min: number) =>
  z
    .string({ error: (i) => `must be a string (got ${got(i)})` })
    .min(min, 'must not be empty')
    .max(2000, 'must be at most 2000 characters');

/** Most frames the worker renders in one clip (a public model may set a lower `maxFrames`). */
export const MAX_FRAMES = 120;

/**
 * Text-to-video input: the text-to-image fields plus `prompt_end`, `seed_end`, `frames`, `fps`. Defaults: 8 frames
 * at 8 fps, the model's native size, 20 steps, guidance 5, a random `seed`, `seed_end` = `seed` when `prompt_end`
 * is given (the prompt moves, the noise stays) else `seed + 1` (the noise moves), output_format mp4.
 */
export const TextToVideoInput = z.strictObject(
  {
    prompt: text(1),
    prompt_end: text(1).optional(),
    negative_prompt: text(0).optional(),
    frames: int(2, MAX_FRAMES).default(8),
    fps: int(1, 60).default(8),
    width: int(8, 4096).optional(),
    height: int(8, 4096).optional(),
    num_inference_steps: int(1, 100).default(20),
    guidance: z
      .number({ error: (i) => `must be a number (got ${got(i)})` })
      .min(0, 'must be at least 0')
      .max(30, 'must be at most 30')
      .default(5),
    seed: int(0, MAX_SEED).optional(),
    seed_end: int(0, MAX_SEED).optional(),
    output_format: z
      .enum(VIDEO_FORMATS, { error: (i) => `must be one of ${VIDEO_FORMATS.join(', ')} (got ${got(i)})` })
      .default('mp4'),
    scheduler: z.enum(['euler', 'ddim'], { error: (i) => `must be "euler" or "ddim" (got ${got(i)})` }).optional(),
  },
  { error: (i) => `must be an object like {"prompt": "...", "frames": 8} (got ${got(i)})` },
);
export type TextToVideoInput = z.infer<typeof TextToVideoInput>;
