import type { Job } from '@berth/worker';
import type { RawImage } from '@huggingface/transformers';
import { encodeImage, type OutputFormat } from '../image/encode.js';
import { storeImage } from '../storage.js';
import { InputImageError, readInputImage, type InputImageLimits } from '../upscale/input-image.js';
import type { Upscaler } from '../upscale/upscaler.js';
import { InputError, parseInput } from './input-error.js';
import { UpscaleInput } from './schemas.js';

/** Options of `createUpscaleHandler` and `createBatchUpscaleHandler`. */
export interface UpscaleHandlerOptions {
  upscaler: Upscaler;
  /** Limits on the input image. Defaults: 20 MB, 512 * 512 pixels, 30 s download. */
  limits?: Omit<InputImageLimits, 'signal'>;
  /** Where images go. Default `storeImage`. */
  store?: (job: Job<unknown>, bytes: Uint8Array, format: OutputFormat) => Promise<{ url: string }>;
}

/** A job's checked input and decoded image, ready for the model. */
export interface PreparedUpscale {
  input: UpscaleInput;
  image: RawImage;
}

/** Checks a job's input and reads its image (`InputError` on bad input); reports the `upscale` progress stage. */
export async function prepareUpscale(job: Job<unknown>, options: UpscaleHandlerOptions): Promise<PreparedUpscale> {
  const input = parseInput(UpscaleInput, job.input);
  let image;
  try {
    image = await readInputImage(input.image, { ...options.limits, signal: job.signal });
  } catch (err) {
    if (err instanceof InputImageError) throw new InputError([`image: ${err.message}`]);
    throw err;
  }
  job.progress({ stage: 'upscale', scale: input.scale, width: image.width, height: image.height });
  return { input, image };
}

/** Encodes and stores a job's upscaled image; answers the job's output. */
export async function finishUpscale(
  job: Job<unknown>,
  prepared: PreparedUpscale,
  big: RawImage,
  started: number,
  options: UpscaleHandlerOptions,
): Promise<{ image_url: string }> {
  const { input, image } = prepared;
  job.signal.throwIfAborted();
  const bytes = await encodeImage(
    {
      data: new Uint8Array(big.data.buffer, big.data.byteOffset, big.data.length),
      width: big.width,
      height: big.height,
    },
    input.output_format,
  );
  const { url } = await (options.store ?? storeImage)(job, bytes, input.output_format);
  job.log.info('upscaled', {
    scale: input.scale,
    from: `${image.width}x${image.height}`,
    to: `${big.width}x${big.height}`,
    seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
  });
  return { image_url: url };
}

/**
 * The upscaler handler, one job per model call: `{ image, scale?, output_format? }` -> `{ image_url }` of the
 * image `scale` times larger. `createBatchUpscaleHandler` (upscale-batch.ts) runs many jobs per call.
 *
 * @example start({ handler: createUpscaleHandler({ upscaler: createUpscaler({ 2: x2Dir, 4: x4Dir }) }) });
 */
export function createUpscaleHandler(
  options: UpscaleHandlerOptions,
): (job: Job<unknown>) => Promise<{ image_url: string }> {
  return async (job) => {
    const prepared = await prepareUpscale(job, options);
    const started = performance.now();
    const big = await options.upscaler.upscale(prepared.image, prepared.input.scale);
    return finishUpscale(job, prepared, big, started, options);
  };
}
