import type { Job } from '@berth/worker';
import { RawImage } from '@huggingface/transformers';
import { encodeImage, type OutputFormat } from '../image/encode.js';
import { randomSeed } from '../noise/gaussian.js';
import { generateImage } from '../pipeline/generate.js';
import type { DiffusionModel } from '../pipeline/load.js';
import { storeImage } from '../storage.js';
import type { Upscaler } from '../upscale/upscaler.js';
import { InputError, parseInput } from './input-error.js';
import { lazyModel } from './lazy-model.js';
import { TextToImageInput } from './schemas.js';

/** Options of `createTextToImageHandler`. */
export interface TextToImageHandlerOptions {
  /** Loads the diffusion model; called on the first job (with its logger), the promise reused (a failed load is retried next job). */
  loadModel: (log: Job<unknown>['log']) => Promise<DiffusionModel>;
  /** Needed for the `upscale` input; without it `upscale` is refused. */
  upscaler?: Upscaler;
  /** Where images go. Default `storeImage` (`uploadOutput` from `@berth/worker/s3`). */
  store?: (job: Job<unknown>, bytes: Uint8Array, format: OutputFormat) => Promise<{ url: string }>;
  /** Batch the two guidance passes into one UNet call. Default `true`. */
  batchGuidance?: boolean;
}

/** Sizes a model accepts: multiples of its VAE factor from 8 latent cells up to twice its native size. */
export function sizeLimits(model: Pick<DiffusionModel, 'vaeScaleFactor' | 'nativeSize'>): {
  min: number;
  max: number;
  multiple: number;
} {
  return { min: 8 * model.vaeScaleFactor, max: 2 * model.nativeSize, multiple: model.vaeScaleFactor };
}

/** What is wrong with one requested side (`width` or `height`), if anything; `tooLarge` is added to the range message. */
export function sideProblem(
  model: Pick<DiffusionModel, 'vaeScaleFactor' | 'nativeSize'>,
  name: string,
  v: number,
  tooLarge = '',
): string | undefined {
  const { min, max, multiple } = sizeLimits(model);
  if (v < min || v > max) return `${name}: must be from ${min} to ${max} for this model (got ${v})${tooLarge}`;
  if (v % multiple !== 0) return `${name}: must be a multiple of ${multiple}, the model's VAE scale factor (got ${v})`;
  return undefined;
}

/**
 * The text-to-image handler: validates `input`, runs the diffusion pipeline with per-step progress, optionally
 * upscales, encodes to `output_format`, stores the file and answers `{ image_url }`.
 *
 * @example start({ handler: createTextToImageHandler({ loadModel: () => loadDiffusionModel(dir) }) });
 */
export function createTextToImageHandler(
  options: TextToImageHandlerOptions,
): (job: Job<unknown>) => Promise<{ image_url: string }> {
  const getModel = lazyModel<DiffusionModel>(options.loadModel);
  const store = options.store ?? storeImage;
  return async (job) => {
    const input = parseInput(TextToImageInput, job.input);
    if (input.upscale && !options.upscaler) throw new InputError(['upscale: this endpoint has no upscaler']);
    const m = await getModel(job.log);
    const width = input.width ?? m.nativeSize;
    const height = input.height ?? m.nativeSize;
    const hint = '; use "upscale" for larger images';
    const problems = [sideProblem(m, 'width', width, hint), sideProblem(m, 'height', height, hint)].filter(
      (p) => p !== undefined,
    );
    if (problems.length) throw new InputError(problems);

    const seed = input.seed ?? randomSeed();
    const stages = input.upscale ? 1 : 0;
    const started = performance.now();
    job.log.info('generating', { width, height, steps: input.num_inference_steps, guidance: input.guidance, seed });
    const image = await generateImage(
      m,
      {
        prompt: input.prompt,
        negativePrompt: input.negative_prompt ?? '',
        width,
        height,
        steps: input.num_inference_steps,
        guidance: input.guidance,
        seed,
        ...(input.scheduler ? { scheduler: input.scheduler } : {}),
      },
      {
        signal: job.signal,
        batchGuidance: options.batchGuidance ?? true,
        onStep: (step, total) =>
          job.progress({ stage: 'denoise', step, total, percent: Math.round((100 * step) / (total + stages)) }),
      },
    );
    let out: { data: Uint8Array; width: number; height: number } = image;
    if (input.upscale && options.upscaler) {
      job.progress({ stage: 'upscale', scale: input.upscale });
      const big = await options.upscaler.upscale(
        new RawImage(new Uint8ClampedArray(image.data), image.width, image.height, 3),
        input.upscale,
      );
      out = {
        data: new Uint8Array(big.data.buffer, big.data.byteOffset, big.data.length),
        width: big.width,
        height: big.height,
      };
    }
    job.signal.throwIfAborted();
    const bytes = await encodeImage(out, input.output_format);
    const { url } = await store(job, bytes, input.output_format);
    job.log.info('image stored', {
      seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
      bytes: bytes.length,
      width: out.width,
      height: out.height,
    });
    return { image_url: url };
  };
}
