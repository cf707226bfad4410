import { loadOnDevice } from '@berth/worker';
import { pipeline, RawImage, Tensor, type ImageToImagePipeline } from '@huggingface/transformers';
import type { InferenceSession } from 'onnxruntime-node';
import { stitch, TILE, tileImages } from './tiles.js';

/** Most tiles in one forward pass of `upscaleMany` (bounds its memory: 32 tiles of x4 output are about 100 MB). */
const MAX_TILES_PER_PASS = 32;

/** Upscale factors the ESRGAN models provide. */
export const SCALES = [2, 4] as const;
export type Scale = (typeof SCALES)[number];

/** Where each factor's model comes from: a local folder or a hub id (see `resolveModels`). */
export type UpscalerModels = Record<Scale, string>;

/**
 * Super-resolution with transformers.js `image-to-image` pipelines (ESRGAN / Swin2SR), one model per factor, each
 * loaded on first use and kept.
 *
 * @example
 * const upscaler = createUpscaler({ 2: '/models/esrgan-x2', 4: '/models/esrgan-x4' });
 * const big = await upscaler.upscale(image, 4);
 */
export interface Upscaler {
  /** Upscales an RGB image by `scale`; the result is `scale` times wider and taller. */
  upscale(image: RawImage, scale: Scale): Promise<RawImage>;
  /**
   * Upscales several RGB images at once: their TILE x TILE tiles go through the model together, up to 32 tiles per
   * forward pass (a batch handler's jobs share the passes). Tiles overlap by a few pixels, so the result differs
   * slightly from `upscale` at tile seams.
   */
  upscaleMany(images: readonly RawImage[], scale: Scale): Promise<RawImage[]>;
  /** Loads the model for `scale` now (otherwise on first use); resolves to the seconds it took (0 if loaded). */
  load(scale: Scale): Promise<number>;
}

/** `sessionOptions`: passed to onnxruntime for each model (default: transformers.js defaults). */
export function createUpscaler(models: UpscalerModels, sessionOptions: InferenceSession.SessionOptions = {}): Upscaler {
  const loaded = new Map<Scale, Promise<ImageToImagePipeline>>();
  const get = (scale: Scale): Promise<ImageToImagePipeline> => {
    let p = loaded.get(scale);
    if (!p) {
      const options = Object.keys(sessionOptions).length ? { session_options: sessionOptions } : {};
      // BERTH_DEVICE (default auto): CUDA when it loads, else the CPU.
      p = loadOnDevice(
        (device) => pipeline('image-to-image', models[scale], { ...options, device }) as Promise<ImageToImagePipeline>,
      ).then((r) => r.value);
      p.catch(() => loaded.delete(scale));
      loaded.set(scale, p);
    }
    return p;
  };
  return {
    async load(scale) {
      if (loaded.has(scale)) return (await get(scale), 0);
      const t0 = performance.now();
      await get(scale);
      return (performance.now() - t0) / 1000;
    },
    async upscaleMany(images, scale) {
      const model = (await get(scale)).model;
      const plan = tileImages(images.map((i) => (i.channels === 3 ? i : i.rgb())));
      const side = TILE * scale;
      const output = new Float32Array(plan.count * 3 * side * side);
      for (let t = 0; t < plan.count; t += MAX_TILES_PER_PASS) {
        const n = Math.min(MAX_TILES_PER_PASS, plan.count - t);
        const pixels = plan.pixels.subarray(t * 3 * TILE * TILE, (t + n) * 3 * TILE * TILE);
        const { reconstruction } = (await model({
          pixel_values: new Tensor('float32', pixels, [n, 3, TILE, TILE]),
        })) as { reconstruction: Tensor };
        if (reconstruction.dims.join() !== [n, 3, side, side].join()) {
          throw new Error(
            `the x${scale} model (${models[scale]}) returned [${reconstruction.dims.join(', ')}] for ${n} tiles of ${TILE}x${TILE}; is it really a x${scale} model?`,
          );
        }
        output.set(reconstruction.data as Float32Array, t * 3 * side * side);
      }
      return stitch(plan, output, scale).map(
        (img) =>
          new RawImage(
            new Uint8ClampedArray(img.data.buffer, img.data.byteOffset, img.data.length),
            img.width,
            img.height,
            3,
          ),
      );
    },
    async upscale(image, scale) {
      const model = await get(scale);
      const out = (await model(image)) as RawImage | RawImage[];
      const result = Array.isArray(out) ? out[0] : out;
      if (!result) throw new Error('the upscaler returned no image');
      if (result.width !== image.width * scale || result.height !== image.height * scale) {
        throw new Error(
          `the x${scale} model (${models[scale]}) returned ${result.width}x${result.height} for ${image.width}x${image.height}; is it really a x${scale} model?`,
        );
      }
      return result.channels === 3 ? result : result.rgb();
    },
  };
}
