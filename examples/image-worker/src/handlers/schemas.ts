import { z } from 'zod';
import { OUTPUT_FORMATS } from '../image/encode.js';
import { MAX_SEED } from '../noise/gaussian.js';

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
const format = z.enum(OUTPUT_FORMATS, { error: (i) => `must be one of ${OUTPUT_FORMATS.join(', ')} (got ${got(i)})` });
const scale = z.union([z.literal(2), z.literal(4)], { error: (i) => `must be 2 or 4 (got ${got(i)})` });

/**
 * Text-to-image input (the spec's public image model fields plus the contract's optional ones). Model-dependent
 * rules (sizes a multiple of the VAE factor, within the model's range) are checked after loading the model.
 * Defaults: width/height the model's native size, `num_inference_steps` (or `steps`) 20, `guidance` 5, random `seed`,
 * `output_format` png, no upscaling, the model's own scheduler.
 */
export const TextToImageInput = z
  .strictObject(
    {
      prompt: z
        .string({ error: (i) => `must be a string (got ${got(i)})` })
        .min(1, 'must not be empty')
        .max(2000, 'must be at most 2000 characters'),
      negative_prompt: z
        .string({ error: (i) => `must be a string (got ${got(i)})` })
        .max(2000, 'must be at most 2000 characters')
        .optional(),
      width: int(8, 4096).optional(),
      height: int(8, 4096).optional(),
      num_inference_steps: int(1, 100).default(20),
      /** Same as num_inference_steps (the name templates/image used to take); wins when both are given. */
      steps: int(1, 100).optional(),
      guidance: z
        .number({ error: (i) => `must be a number (got ${got(i)})` })
        .min(0, 'must be at least 0')
        .max(30, 'must be at most 30')
        .default(5),
      seed: int(0, MAX_SEED).optional(),
      output_format: format.default('png'),
      /** Upscale the generated image 2x or 4x with the ESRGAN models. */
      upscale: scale.optional(),
      /** Use this scheduler instead of the one in scheduler_config.json. */
      scheduler: z.enum(['euler', 'ddim'], { error: (i) => `must be "euler" or "ddim" (got ${got(i)})` }).optional(),
    },
    { error: (i) => `must be an object like {"prompt": "..."} (got ${got(i)})` },
  )
  .transform(({ steps, ...rest }) => ({ ...rest, num_inference_steps: steps ?? rest.num_inference_steps }));
export type TextToImageInput = z.infer<typeof TextToImageInput>;

/** Upscaler input: `image` is an http(s) URL, a data URL or base64; `scale` 2 (default) or 4. */
export const UpscaleInput = z.strictObject(
  {
    image: z
      .string({ error: (i) => `must be an http(s) URL or base64 image data (got ${got(i)})` })
      .min(1, 'must not be empty'),
    scale: scale.default(2),
    output_format: format.default('png'),
  },
  { error: (i) => `must be an object like {"image": "https://...", "scale": 2} (got ${got(i)})` },
);
export type UpscaleInput = z.infer<typeof UpscaleInput>;
