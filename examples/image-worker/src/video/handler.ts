import type { Job } from '@berth/worker';
import { uploadOutput } from '@berth/worker/s3';
import { InputError, parseInput } from '../handlers/input-error.js';
import { lazyModel } from '../handlers/lazy-model.js';
import { sideProblem } from '../handlers/text-to-image.js';
import { MAX_SEED, randomSeed } from '../noise/gaussian.js';
import type { DiffusionModel } from '../pipeline/load.js';
import { encodeVideo, VIDEO_CONTENT_TYPES, type VideoFormat } from './encode-video.js';
import { generateFrames } from './frames.js';
import { TextToVideoInput } from './schema.js';

/** What the handler answers (the control plane adds `cost` on public model slugs). */
export interface TextToVideoOutput {
  /** The clip, valid 7 days: `video/mp4` (H.264) or animated `image/webp`. */
  video_url: string;
  format: VideoFormat;
  width: number;
  height: number;
  frames: number;
  fps: number;
  /** Seconds: frames / fps, 3 decimals. */
  duration: number;
}

/** Options of `createTextToVideoHandler`. */
export interface TextToVideoHandlerOptions {
  /** Loads the diffusion model; called on the first job, the promise reused (a failed load is retried next job). */
  loadModel: (log: Job<unknown>['log']) => Promise<DiffusionModel>;
  /** Where clips go. Default `uploadOutput` from `@berth/worker/s3`. */
  store?: (job: Job<unknown>, bytes: Uint8Array, format: VideoFormat) => Promise<{ url: string }>;
}

/**
 * The text-to-video handler: validates `input`, renders `frames` images interpolated between (`prompt`, `seed`)
 * and (`prompt_end`, `seed_end`), reporting progress after every frame (`{stage: 'frame', frame, frames, percent}`),
 * encodes them (`{stage: 'encode'}`), stores the clip and answers `{ video_url, format, width, height, frames, fps, duration }`.
 *
 * @example start({ handler: createTextToVideoHandler({ loadModel: () => loadDiffusionModel(dir) }) });
 */
export function createTextToVideoHandler(
  options: TextToVideoHandlerOptions,
): (job: Job<unknown>) => Promise<TextToVideoOutput> {
  const getModel = lazyModel<DiffusionModel>(options.loadModel);
  const store =
    options.store ??
    ((job, bytes, format) => uploadOutput(job, bytes, { contentType: VIDEO_CONTENT_TYPES[format], extension: format }));
  return async (job) => {
    const input = parseInput(TextToVideoInput, job.input);
    const m = await getModel(job.log);
    const width = input.width ?? m.nativeSize;
    const height = input.height ?? m.nativeSize;
    const problems: string[] = [];
    for (const [name, v] of [
      ['width', width],
      ['height', height],
    ] as const) {
      const problem =
        sideProblem(m, name, v) ??
        (input.output_format === 'mp4' && v % 2 !== 0
          ? `${name}: must be even for mp4 (H.264 yuv420p) (got ${v})`
          : undefined);
      if (problem) problems.push(problem);
    }
    if (problems.length) throw new InputError(problems);

    const seed = input.seed ?? randomSeed();
    const seedEnd = input.seed_end ?? (input.prompt_end !== undefined ? seed : (seed + 1) % (MAX_SEED + 1));
    const { frames, fps, output_format: format } = input;
    const started = performance.now();
    job.log.info('generating clip', {
      width,
      height,
      frames,
      fps,
      steps: input.num_inference_steps,
      guidance: input.guidance,
      seed,
      seedEnd,
    });
    const images = await generateFrames(
      m,
      {
        prompt: input.prompt,
        ...(input.prompt_end !== undefined ? { promptEnd: input.prompt_end } : {}),
        negativePrompt: input.negative_prompt ?? '',
        frames,
        width,
        height,
        steps: input.num_inference_steps,
        guidance: input.guidance,
        seed,
        seedEnd,
        ...(input.scheduler ? { scheduler: input.scheduler } : {}),
      },
      {
        signal: job.signal,
        onFrame: (frame, total) =>
          job.progress({ stage: 'frame', frame, frames: total, percent: Math.round((100 * frame) / (total + 1)) }),
      },
    );
    const rendered = performance.now();
    job.progress({ stage: 'encode', format, percent: Math.round((100 * frames) / (frames + 1)) });
    const bytes = await encodeVideo(images, fps, format, job.signal);
    job.signal.throwIfAborted();
    const { url } = await store(job, bytes, format);
    job.log.info('clip stored', {
      format,
      bytes: bytes.length,
      secondsPerFrame: Number(((rendered - started) / 1000 / frames).toFixed(4)),
      encodeSeconds: Number(((performance.now() - rendered) / 1000).toFixed(3)),
    });
    return { video_url: url, format, width, height, frames, fps, duration: Number((frames / fps).toFixed(3)) };
  };
}
