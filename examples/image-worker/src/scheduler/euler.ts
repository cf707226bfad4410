import { alphasCumprod } from './betas.js';
import type { SchedulerConfig } from './config.js';
import type { Scheduler } from './scheduler.js';
import { spacedTimesteps } from './timesteps.js';

/**
 * Sigmas of diffusers' `EulerDiscreteScheduler.set_timesteps` for `steps` steps: `sqrt((1 - ac) / ac)` over the
 * training timesteps, linearly interpolated at each (possibly fractional) timestep, then a final 0.
 *
 * @example eulerSigmas(config, 20) // 21 values, last 0
 */
export function eulerSigmas(config: SchedulerConfig, steps: number): { timesteps: number[]; sigmas: number[] } {
  const ac = alphasCumprod(config);
  const all = Array.from(ac, (a) => Math.sqrt((1 - a) / a));
  const timesteps = spacedTimesteps(config, steps, false);
  const sigmas = timesteps.map((t) => interp(all, t));
  sigmas.push(0);
  return { timesteps, sigmas };
}

function interp(values: number[], x: number): number {
  if (x <= 0) return values[0] as number;
  if (x >= values.length - 1) return values[values.length - 1] as number;
  const lo = Math.floor(x);
  const f = x - lo;
  return (values[lo] as number) * (1 - f) + (values[lo + 1] as number) * f;
}

/**
 * Euler (first-order, deterministic: `s_churn = 0`) sampler over Karras-style sigmas, as diffusers'
 * `EulerDiscreteScheduler`. Supports `epsilon`, `v_prediction` and `sample` prediction types.
 */
export function createEulerScheduler(config: SchedulerConfig, steps: number): Scheduler {
  if (config.use_karras_sigmas) throw new Error('use_karras_sigmas is not supported by this Euler scheduler');
  const { timesteps, sigmas } = eulerSigmas(config, steps);
  const maxSigma = Math.max(...sigmas);
  const initNoiseSigma = config.timestep_spacing === 'leading' ? Math.sqrt(maxSigma * maxSigma + 1) : maxSigma;
  const sigmaAt = (i: number): number => {
    const s = sigmas[i];
    if (s === undefined) throw new RangeError(`step ${i} is out of range (0-${steps - 1})`);
    return s;
  };
  return {
    timesteps,
    initNoiseSigma,
    scaleModelInput(sample, i) {
      const sigma = sigmaAt(i);
      const k = 1 / Math.sqrt(sigma * sigma + 1);
      const out = new Float32Array(sample.length);
      for (let j = 0; j < sample.length; j++) out[j] = (sample[j] as number) * k;
      return out;
    },
    step(modelOutput, i, sample) {
      const sigma = sigmaAt(i);
      const dt = sigmaAt(i + 1) - sigma;
      const out = new Float32Array(sample.length);
      const vA = -sigma / Math.sqrt(sigma * sigma + 1);
      const vB = 1 / (sigma * sigma + 1);
      for (let j = 0; j < sample.length; j++) {
        const x = sample[j] as number;
        const m = modelOutput[j] as number;
        let x0: number;
        if (config.prediction_type === 'epsilon') x0 = x - sigma * m;
        else if (config.prediction_type === 'v_prediction') x0 = m * vA + x * vB;
        else x0 = m;
        out[j] = x + ((x - x0) / sigma) * dt;
      }
      return out;
    },
  };
}
