import { z } from 'zod';

/**
 * The fields of a diffusers `scheduler/scheduler_config.json` this worker understands. Unknown fields are kept
 * by zod's default object parsing being non-strict (they are ignored). Defaults are diffusers' defaults.
 */
export const SchedulerConfigSchema = z.object({
  /** `EulerDiscreteScheduler` or `DDIMScheduler` (others are refused with a clear message). */
  _class_name: z.string().default('EulerDiscreteScheduler'),
  num_train_timesteps: z.number().int().positive().default(1000),
  beta_start: z.number().default(0.0001),
  beta_end: z.number().default(0.02),
  /** `linear`, `scaled_linear` or `squaredcos_cap_v2`. */
  beta_schedule: z.enum(['linear', 'scaled_linear', 'squaredcos_cap_v2']).default('linear'),
  trained_betas: z.array(z.number()).nullable().default(null),
  /** `epsilon`, `v_prediction` or (DDIM only) `sample`. */
  prediction_type: z.enum(['epsilon', 'v_prediction', 'sample']).default('epsilon'),
  /** `leading`, `trailing` or `linspace`. */
  timestep_spacing: z.enum(['leading', 'trailing', 'linspace']).default('linspace'),
  steps_offset: z.number().int().min(0).default(0),
  /** DDIM: alpha at the final step is 1 (else `alphas_cumprod[0]`). */
  set_alpha_to_one: z.boolean().default(true),
  /** DDIM: clamp the predicted original sample to `[-clip_sample_range, clip_sample_range]`. */
  clip_sample: z.boolean().default(false),
  clip_sample_range: z.number().default(1),
  /** Euler: only `linear` interpolation of sigmas is implemented. */
  interpolation_type: z.literal('linear').default('linear'),
  /** Euler: Karras sigmas are not implemented; `true` is refused. */
  use_karras_sigmas: z.literal(false).nullable().default(false),
});

export type SchedulerConfig = z.infer<typeof SchedulerConfigSchema>;

/**
 * Parses a scheduler config, throwing an error that names the bad field.
 *
 * @example const config = parseSchedulerConfig(JSON.parse(readFileSync('scheduler/scheduler_config.json', 'utf8')));
 */
export function parseSchedulerConfig(value: unknown): SchedulerConfig {
  const parsed = SchedulerConfigSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(top level)'}: ${i.message}`);
    throw new Error(`unsupported scheduler_config.json: ${problems.join('; ')}`);
  }
  return parsed.data;
}
