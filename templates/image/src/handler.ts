import type { Job } from '@berth/worker';
import sharp from 'sharp';
import { z } from 'zod';
import { generate } from './generate.js';
import { loadDiffusion } from './model.js';

const multipleOf4 = z
  .number()
  .int()
  .min(32)
  .max(256)
  .refine((n) => n % 4 === 0, 'must be a multiple of 4');
const steps = z.number().int().min(1).max(50);
/** The fields of Berth's image models (`num_inference_steps`, as the public models and examples/image-worker name it); `steps` is accepted for it. */
export const Input = z
  .strictObject({
    prompt: z.string().min(1).max(200),
    num_inference_steps: steps.default(20),
    steps: steps.optional().describe('Same as num_inference_steps.'),
    guidance: z.number().min(1).max(20).default(5),
    seed: z.number().int().min(0).default(0),
    width: multipleOf4.default(64),
    height: multipleOf4.default(64),
  })
  .transform(({ steps: alias, num_inference_steps, ...rest }) => ({ ...rest, steps: alias ?? num_inference_steps }));

/** Draws the prompt; reports progress per denoising step; answers with a base64 PNG. */
export async function handler(job: Job<z.input<typeof Input>>) {
  const params = Input.parse(job.input);
  const model = await loadDiffusion();
  const started = performance.now();
  const image = await generate(model, params, (step) => job.progress({ step, of: params.steps }), job.signal);
  const png = await sharp(image.rgb, { raw: { width: image.width, height: image.height, channels: 3 } })
    .png()
    .toBuffer();
  job.log.info('image generated', { ms: Math.round(performance.now() - started), bytes: png.length });
  return { image_base64: png.toString('base64'), width: image.width, height: image.height, seed: params.seed };
}
