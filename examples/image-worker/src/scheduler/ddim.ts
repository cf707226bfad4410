import { alphasCumprod } from './betas.js';
import type { SchedulerConfig } from './config.js';
import type { Scheduler } from './scheduler.js';
import { spacedTimesteps } from './timesteps.js';

/**
 * Deterministic DDIM (`eta = 0`), as diffusers' `DDIMScheduler`: the previous timestep is
 * `t - floor(T / steps)`; past 0 the final alpha is 1 (`set_alpha_to_one`) or `alphas_cumprod[0]`.
 * Supports `epsilon`, `v_prediction` and `sample` prediction types and `clip_sample`.
 */
export function createDdimScheduler(config: SchedulerConfig, steps: number): Scheduler {
  const ac = alphasCumprod(config);
  const timesteps = spacedTimesteps(config, steps, true);
  const finalAlpha = config.set_alpha_to_one ? 1 : (ac[0] as number);
  const stride = Math.floor(config.num_train_timesteps / steps);
  const alphaAt = (t: number): number => (t >= 0 ? (ac[t] as number) : finalAlpha);
  return {
    timesteps,
    initNoiseSigma: 1,
    scaleModelInput: (sample) => Float32Array.from(sample),
    step(modelOutput, i, sample) {
      const t = timesteps[i];
      if (t === undefined) throw new RangeError(`step ${i} is out of range (0-${steps - 1})`);
      const a = alphaAt(t);
      const aPrev = alphaAt(t - stride);
      const sa = Math.sqrt(a);
      const sb = Math.sqrt(1 - a);
      const saPrev = Math.sqrt(aPrev);
      const sbPrev = Math.sqrt(1 - aPrev);
      const clip = config.clip_sample ? config.clip_sample_range : Infinity;
      const out = new Float32Array(sample.length);
      for (let j = 0; j < sample.length; j++) {
        const x = sample[j] as number;
        const m = modelOutput[j] as number;
        let x0: number;
        let eps: number;
        if (config.prediction_type === 'epsilon') {
          x0 = (x - sb * m) / sa;
          eps = m;
        } else if (config.prediction_type === 'v_prediction') {
          x0 = sa * x - sb * m;
          eps = sa * m + sb * x;
        } else {
          x0 = m;
          eps = (x - sa * x0) / sb;
        }
        if (x0 > clip) x0 = clip;
        else if (x0 < -clip) x0 = -clip;
        out[j] = saPrev * x0 + sbPrev * eps;
      }
      return out;
    },
  };
}
