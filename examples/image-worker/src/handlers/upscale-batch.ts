import type { BatchHandler, Job } from '@berth/worker';
import { SCALES } from '../upscale/upscaler.js';
import { finishUpscale, prepareUpscale, type PreparedUpscale, type UpscaleHandlerOptions } from './upscale.js';

/**
 * The upscaler as a batch handler (`start({ batch, handler })`): the jobs' inputs are checked and their images
 * read in parallel, then the images of each scale go through the model together, their tiles sharing forward
 * passes (`Upscaler.upscaleMany`). A job with a bad input or an unreadable image fails alone (an `Error` in its
 * slot); a model failure fails the jobs of that scale.
 *
 * @example start({ batch: { maxSize: 8, maxWaitMs: 10 }, handler: createBatchUpscaleHandler({ upscaler }) });
 */
export function createBatchUpscaleHandler(
  options: UpscaleHandlerOptions,
): BatchHandler<unknown, { image_url: string }> {
  return async (jobs: Job<unknown>[]) => {
    const prepared = await Promise.allSettled(jobs.map((job) => prepareUpscale(job, options)));
    const outputs: ({ image_url: string } | Error)[] = prepared.map((p) =>
      p.status === 'rejected' ? toError(p.reason) : new Error('not upscaled'),
    );
    for (const scale of SCALES) {
      const picked = prepared.flatMap((p, i) =>
        p.status === 'fulfilled' && p.value.input.scale === scale && !jobs[i]?.signal.aborted ? [i] : [],
      );
      if (picked.length === 0) continue;
      const ready = picked.map((i) => (prepared[i] as PromiseFulfilledResult<PreparedUpscale>).value);
      const started = performance.now();
      let bigs;
      try {
        bigs = await options.upscaler.upscaleMany(
          ready.map((r) => r.image),
          scale,
        );
      } catch (err) {
        for (const i of picked) outputs[i] = toError(err);
        continue;
      }
      const finished = await Promise.allSettled(
        picked.map((i, k) =>
          finishUpscale(jobs[i] as Job<unknown>, ready[k] as PreparedUpscale, bigs[k]!, started, options),
        ),
      );
      finished.forEach((f, k) => {
        outputs[picked[k] as number] = f.status === 'fulfilled' ? f.value : toError(f.reason);
      });
    }
    return outputs;
  };
}

function toError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
