import type { SchedulerConfig } from './config.js';

/** Beta schedule of the forward process, as diffusers computes it (float64 here). */
export function betas(config: SchedulerConfig): Float64Array {
  const n = config.num_train_timesteps;
  if (config.trained_betas) {
    if (config.trained_betas.length !== n)
      throw new Error(`trained_betas has ${config.trained_betas.length} values, num_train_timesteps is ${n}`);
    return Float64Array.from(config.trained_betas);
  }
  const out = new Float64Array(n);
  switch (config.beta_schedule) {
    case 'linear':
      for (let i = 0; i < n; i++) out[i] = linspaceAt(config.beta_start, config.beta_end, n, i);
      break;
    case 'scaled_linear':
      for (let i = 0; i < n; i++)
        out[i] = linspaceAt(Math.sqrt(config.beta_start), Math.sqrt(config.beta_end), n, i) ** 2;
      break;
    case 'squaredcos_cap_v2': {
      const alphaBar = (t: number) => Math.cos(((t + 0.008) / 1.008) * (Math.PI / 2)) ** 2;
      for (let i = 0; i < n; i++) out[i] = Math.min(1 - alphaBar((i + 1) / n) / alphaBar(i / n), 0.999);
      break;
    }
  }
  return out;
}

/** Cumulative products of `1 - beta`. */
export function alphasCumprod(config: SchedulerConfig): Float64Array {
  const b = betas(config);
  const out = new Float64Array(b.length);
  let acc = 1;
  for (let i = 0; i < b.length; i++) {
    acc *= 1 - (b[i] as number);
    out[i] = acc;
  }
  return out;
}

/** `i`-th of `n` evenly spaced values from `start` to `end` inclusive (numpy `linspace`). */
export function linspaceAt(start: number, end: number, n: number, i: number): number {
  return n === 1 ? start : start + ((end - start) * i) / (n - 1);
}
