import type { BatchHandler, Job } from '@berth/worker';
import sharp from 'sharp';
import { z } from 'zod';
import { generateMany } from './generate.js';
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

type Output = { image_base64: string; width: number; height: number; seed: number };

/**
 * The batch handler: draws each job's prompt, the jobs of the same size and step count together (one UNet pass
 * per step for all of them); reports each job's progress per denoising step; answers each with a base64 PNG. A
 * job with a bad input fails alone.
 */
export const batchHandler: BatchHandler<Record<string, unknown>, Output> = async (jobs) => {
  const parsed = jobs.map((job) => Input.safeParse(job.input));
  const outputs: (Output | Error)[] = parsed.map((p) =>
    p.success ? new Error('not drawn') : new Error(`invalid_input: ${p.error.issues.map(describeIssue).join('; ')}`),
  );
  const groups = new Map<string, number[]>();
  parsed.forEach((p, i) => {
    if (!p.success) return;
    const key = `${p.data.width}x${p.data.height}x${p.data.steps}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  const model = await loadDiffusion();
  for (const picked of groups.values()) {
    const params = picked.map((i) => (parsed[i] as { data: z.output<typeof Input> }).data);
    const started = performance.now();
    const images = await generateMany(
      model,
      params,
      (k, step) => jobs[picked[k]!]!.progress({ step, of: params[k]!.steps }),
      picked.map((i) => jobs[i]!.signal),
    );
    for (const [k, image] of images.entries()) {
      const png = await sharp(image.rgb, { raw: { width: image.width, height: image.height, channels: 3 } })
        .png()
        .toBuffer();
      const job = jobs[picked[k]!]!;
      job.log.info('image generated', {
        ms: Math.round(performance.now() - started),
        bytes: png.length,
        batch: images.length,
      });
      outputs[picked[k]!] = {
        image_base64: png.toString('base64'),
        width: image.width,
        height: image.height,
        seed: params[k]!.seed,
      };
    }
  }
  return outputs;
};

/** The same drawing for one job (a batch of one): for `runJob` in tests and `--test-input`. */
export async function handler(job: Job): Promise<Output> {
  const [out] = (await batchHandler([job])) as (Output | Error)[];
  if (out instanceof Error) throw out;
  return out!;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  return `${issue.path.map(String).join('.') || 'input'}: ${issue.message}`;
}
