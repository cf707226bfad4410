import { gaussianNoise } from '../noise/gaussian.js';
import { encodeText, generateImage, type RgbImage } from '../pipeline/generate.js';
import type { DiffusionModel } from '../pipeline/load.js';
import { frameT, lerp, slerp } from './interpolate.js';

/** One clip request, already validated. */
export interface ClipParams {
  prompt: string;
  /** The prompt of the last frame; text embeddings move linearly from `prompt` to it. Default: `prompt`. */
  promptEnd?: string;
  negativePrompt?: string;
  frames: number;
  width: number;
  height: number;
  steps: number;
  guidance: number;
  /** Noise seed of the first frame. */
  seed: number;
  /** Noise seed of the last frame; the starting noise moves along a slerp from `seed` to it. */
  seedEnd: number;
  scheduler?: 'euler' | 'ddim';
}

/** Options of `generateFrames`. */
export interface ClipOptions {
  signal?: AbortSignal;
  /** Called after each frame with its 1-based number. */
  onFrame?: (frame: number, frames: number, image: RgbImage) => void;
}

/**
 * Generates the frames of a clip with the text-to-image pipeline: frame i of n uses t = i / (n - 1), starting
 * noise `slerp(noise(seed), noise(seedEnd), t)` and text embeddings `lerp(embed(prompt), embed(promptEnd), t)`
 * (the negative prompt stays). The same parameters give the same frames.
 *
 * @example const frames = await generateFrames(model, { prompt: 'a red circle on a blue background', promptEnd: 'a red circle on a green background', frames: 8, width: 64, height: 64, steps: 10, guidance: 5, seed: 1, seedEnd: 1 });
 */
export async function generateFrames(
  model: DiffusionModel,
  params: ClipParams,
  options: ClipOptions = {},
): Promise<RgbImage[]> {
  const f = model.vaeScaleFactor;
  const size = model.latentChannels * (params.height / f) * (params.width / f);
  const noiseStart = gaussianNoise(size, params.seed);
  const noiseEnd = params.seedEnd === params.seed ? noiseStart : gaussianNoise(size, params.seedEnd);
  const guided = params.guidance > 1;
  const negative = params.negativePrompt ?? '';
  const texts = [params.prompt, params.promptEnd ?? params.prompt];
  // One encoder call: [negative, prompt, prompt_end] (or the two prompts without guidance).
  const all = await encodeText(model, guided ? [negative, ...texts] : texts);
  const per = all.data.length / all.dims[0]!;
  const at = (k: number) => all.data.subarray(k * per, (k + 1) * per);
  const [neg, start, end] = guided ? [at(0), at(1), at(2)] : [undefined, at(0), at(1)];
  const frames: RgbImage[] = [];
  for (let i = 0; i < params.frames; i++) {
    options.signal?.throwIfAborted();
    const t = frameT(i, params.frames);
    const cond = lerp(start, end, t);
    const data = neg ? new Float32Array(per * 2) : cond;
    if (neg) {
      data.set(neg, 0);
      data.set(cond, per);
    }
    const image = await generateImage(
      model,
      {
        prompt: params.prompt,
        width: params.width,
        height: params.height,
        steps: params.steps,
        guidance: params.guidance,
        seed: params.seed,
        ...(params.scheduler ? { scheduler: params.scheduler } : {}),
      },
      {
        ...(options.signal ? { signal: options.signal } : {}),
        noise: slerp(noiseStart, noiseEnd, t),
        embeddings: { data, dims: [neg ? 2 : 1, ...all.dims.slice(1)] },
      },
    );
    frames.push(image);
    options.onFrame?.(i + 1, params.frames, image);
  }
  return frames;
}
