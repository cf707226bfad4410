import { linspaceAt } from './betas.js';
import type { SchedulerConfig } from './config.js';

/**
 * The timesteps of an `steps`-step run, highest first, as diffusers' `set_timesteps` computes them for the
 * config's `timestep_spacing` (Euler keeps `linspace` values fractional; DDIM rounds them).
 *
 * - `leading`: `[0, r, 2r, ...]` with `r = floor(T / steps)`, reversed, plus `steps_offset`;
 * - `trailing`: `round(T, T - T/steps, ...) - 1`;
 * - `linspace`: `steps` evenly spaced values from `T - 1` down to 0.
 */
export function spacedTimesteps(config: SchedulerConfig, steps: number, round: boolean): number[] {
  const T = config.num_train_timesteps;
  if (!Number.isInteger(steps) || steps < 1 || steps > T)
    throw new RangeError(`steps must be a whole number from 1 to ${T} (got ${steps})`);
  const out: number[] = [];
  switch (config.timestep_spacing) {
    case 'leading': {
      const ratio = Math.floor(T / steps);
      for (let i = steps - 1; i >= 0; i--) out.push(i * ratio + config.steps_offset);
      break;
    }
    case 'trailing': {
      const ratio = T / steps;
      for (let t = T; t > 0; t -= ratio) out.push(roundHalfEven(t) - 1);
      break;
    }
    case 'linspace':
      for (let i = steps - 1; i >= 0; i--) {
        const t = linspaceAt(0, T - 1, steps, i);
        out.push(round ? roundHalfEven(t) : t);
      }
      break;
  }
  return out.slice(0, steps);
}

/** numpy's `round` (ties to even), so timesteps match diffusers exactly. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}
