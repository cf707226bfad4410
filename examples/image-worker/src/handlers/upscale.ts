import type { Job } from '@berth/worker';
import { encodeImage, type OutputFormat } from '../image/encode.js';
import { storeImage } from '../storage.js';
import { InputImageError, readInputImage, type InputImageLimits } from '../upscale/input-image.js';
import type { Upscaler } from '../upscale/upscaler.js';
import { InputError, parseInput } from './input-error.js';
import { UpscaleInput } from './schemas.js';

/** Options of `createUpscaleHandler`. */
export interface UpscaleHandlerOptions {
  upscaler: Upscaler;
  /** Limits on the input image. Defaults: 20 MB, 512 * 512 pixels, 30 s download. */
  limits?: Omit<InputImageLimits, 'signal'>;
  /** Where images go. Default `storeImage`. */
  store?: (job: Job<unknown>, bytes: Uint8Array, format: OutputFormat) => Promise<{ url: string }>;
}

/**
 * The upscaler handler: `{ image, scale?, output_format? }` -> `{ image_url }` of the image `scale` times larger.
 *
 * @example start({ handler: createUpscaleHandler({ upscaler: createUpscaler({ 2: x2Dir, 4: x4Dir }) }) });
 */
export function createUpscaleHandler(
  options: UpscaleHandlerOptions,
): (job: Job<unknown>) => Promise<{ image_url: string }> {
  const store = options.store ?? storeImage;
  return async (job) => {
    const input = parseInput(UpscaleInput, job.input);
    let image;
    try {
      image = await readInputImage(input.image, { ...options.limits, signal: job.signal });
    } catch (err) {
      if (err instanceof InputImageError) throw new InputError([`image: ${err.message}`]);
      throw err;
    }
    job.progress({ stage: 'upscale', scale: input.scale, width: image.width, height: image.height });
    const started = performance.now();
    const big = await options.upscaler.upscale(image, input.scale);
    job.signal.throwIfAborted();
    const bytes = await encodeImage(
      {
        data: new Uint8Array(big.data.buffer, big.data.byteOffset, big.data.length),
        width: big.width,
        height: big.height,
      },
      input.output_format,
    );
    const { url } = await store(job, bytes, input.output_format);
    job.log.info('upscaled', {
      scale: input.scale,
      from: `${image.width}x${image.height}`,
      to: `${big.width}x${big.height}`,
      seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
    });
    return { image_url: url };
  };
}
