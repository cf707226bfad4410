import type { SchedulerConfig } from './config.js';
import { createDdimScheduler } from './ddim.js';
import { createEulerScheduler } from './euler.js';
import type { Scheduler } from './scheduler.js';

export { parseSchedulerConfig, type SchedulerConfig } from './config.js';
export { eulerSigmas, createEulerScheduler } from './euler.js';
export { createDdimScheduler } from './ddim.js';
export type { Scheduler } from './scheduler.js';

/** Scheduler kinds this worker implements, by diffusers class name. */
export const SCHEDULERS = {
  EulerDiscreteScheduler: createEulerScheduler,
  DDIMScheduler: createDdimScheduler,
} as const;

/**
 * The scheduler `config._class_name` names (or `kind` when given), set up for `steps` steps.
 *
 * @example const s = createScheduler(parseSchedulerConfig(json), 20); s.timesteps // [951, 901, ..., 1]
 */
export function createScheduler(config: SchedulerConfig, steps: number, kind?: 'euler' | 'ddim'): Scheduler {
  if (kind === 'euler') return createEulerScheduler(config, steps);
  if (kind === 'ddim') return createDdimScheduler(config, steps);
  const make = SCHEDULERS[config._class_name as keyof typeof SCHEDULERS] as typeof createEulerScheduler | undefined;
  if (!make) {
    throw new Error(
      `scheduler ${config._class_name} is not supported (supported: ${Object.keys(SCHEDULERS).join(', ')}); choose one with the "scheduler" input`,
    );
  }
  return make(config, steps);
}
