import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alphasCumprod } from './betas.js';
import {
  createDdimScheduler,
  createEulerScheduler,
  createScheduler,
  eulerSigmas,
  parseSchedulerConfig,
  type Scheduler,
  type SchedulerConfig,
} from './index.js';
import { roundHalfEven, spacedTimesteps } from './timesteps.js';
import { modelsDir } from '../test-models.test-helpers.js';

const tinyConfig = parseSchedulerConfig(
  JSON.parse(readFileSync(join(modelsDir, 'tiny-sd/scheduler/scheduler_config.json'), 'utf8')),
);
const sd = (over: Partial<SchedulerConfig>): SchedulerConfig => ({ ...tinyConfig, ...over });

// Reference values computed independently with numpy, following diffusers' EulerDiscreteScheduler.set_timesteps:
// betas = linspace(sqrt(0.00085), sqrt(0.012), 1000)**2; ac = cumprod(1 - betas); sigma = sqrt((1 - ac) / ac);
// timesteps (leading, 20 steps, offset 1) = arange(20)*50 reversed + 1; sigmas = interp(timesteps, arange(1000), sigma) + [0].
const TINY_20_SIGMAS = [
  11.0283, 8.39068, 6.5064, 5.13443, 4.1167, 3.34776, 2.7562, 2.29285, 1.92344, 1.62369, 1.37618, 1.16822, 0.990409,
  0.835653, 0.698398, 0.57405, 0.458333, 0.346187, 0.228147, 0.0413144, 0,
];

describe('scheduler config', () => {
  it('reads the tiny-sd scheduler_config.json', () => {
    expect(tinyConfig).toMatchObject({
      _class_name: 'EulerDiscreteScheduler',
      beta_schedule: 'scaled_linear',
      timestep_spacing: 'leading',
      steps_offset: 1,
      prediction_type: 'epsilon',
    });
  });

  it('refuses settings it does not implement, naming the field', () => {
    expect(() => parseSchedulerConfig({ beta_schedule: 'sigmoid' })).toThrow(/beta_schedule/);
    expect(() => parseSchedulerConfig({ use_karras_sigmas: true })).toThrow(/use_karras_sigmas/);
    expect(() => createScheduler(parseSchedulerConfig({ _class_name: 'LMSDiscreteScheduler' }), 10)).toThrow(
      /LMSDiscreteScheduler is not supported/,
    );
  });
});

describe('beta schedule', () => {
  it('scaled_linear matches Stable Diffusion alphas_cumprod at both ends', () => {
    const ac = alphasCumprod(tinyConfig);
    expect(ac[0]).toBeCloseTo(0.99915, 10);
    expect(ac[999]).toBeCloseTo(0.004660098513077238, 10);
  });

  it('the full sigma range is the well-known SD 0.0292 .. 14.6146', () => {
    const { sigmas } = eulerSigmas(sd({ timestep_spacing: 'linspace', steps_offset: 0 }), 1000);
    expect(sigmas[0]).toBeCloseTo(14.614641229333639, 8);
    expect(sigmas[999]).toBeCloseTo(0.029167158151720367, 8);
  });

  it('squaredcos_cap_v2 decreases from ~1 to ~0', () => {
    const ac = alphasCumprod(sd({ beta_schedule: 'squaredcos_cap_v2' }));
    expect(ac[0]).toBeGreaterThan(0.999);
    expect(ac[999]).toBeLessThan(1e-3);
    for (let i = 1; i < 1000; i++) expect(ac[i]).toBeLessThan(ac[i - 1] as number);
  });
});

describe('timestep spacing', () => {
  it('leading with steps_offset (tiny-sd, 20 steps): 951, 901, ..., 1', () => {
    expect(spacedTimesteps(tinyConfig, 20, true)).toEqual(Array.from({ length: 20 }, (_, i) => 951 - 50 * i));
  });
  it('trailing (SD-Turbo): 1 step -> 999; 4 steps -> 999, 749, 499, 249', () => {
    expect(spacedTimesteps(sd({ timestep_spacing: 'trailing' }), 1, true)).toEqual([999]);
    expect(spacedTimesteps(sd({ timestep_spacing: 'trailing' }), 4, true)).toEqual([999, 749, 499, 249]);
  });
  it('linspace: 4 steps -> 999, 666, 333, 0', () => {
    expect(spacedTimesteps(sd({ timestep_spacing: 'linspace' }), 4, true)).toEqual([999, 666, 333, 0]);
  });
  it('rejects step counts out of range', () => {
    expect(() => spacedTimesteps(tinyConfig, 0, true)).toThrow(RangeError);
    expect(() => spacedTimesteps(tinyConfig, 1001, true)).toThrow(RangeError);
  });
  it('rounds halves to even like numpy', () => {
    expect([0.5, 1.5, 2.5, -2.5, 2.4, 2.6].map(roundHalfEven)).toEqual([0, 2, 2, -2, 2, 3]);
  });
});

describe('Euler', () => {
  it('sigmas for the tiny-sd config match the numpy reference', () => {
    const { timesteps, sigmas } = eulerSigmas(tinyConfig, 20);
    expect(timesteps[0]).toBe(951);
    expect(sigmas).toHaveLength(21);
    sigmas.forEach((s, i) => expect(s).toBeCloseTo(TINY_20_SIGMAS[i] as number, 3));
  });

  it('init noise sigma: sqrt(max^2 + 1) with leading spacing, max sigma with trailing', () => {
    expect(createEulerScheduler(tinyConfig, 20).initNoiseSigma).toBeCloseTo(11.073576128782985, 4);
    expect(createEulerScheduler(sd({ timestep_spacing: 'trailing' }), 1).initNoiseSigma).toBeCloseTo(
      14.614641229333639,
      6,
    );
  });

  it('linspace timesteps are fractional and interpolated', () => {
    const { timesteps, sigmas } = eulerSigmas(sd({ timestep_spacing: 'linspace', steps_offset: 0 }), 4);
    expect(timesteps).toEqual([999, 666, 333, 0]);
    expect(sigmas[1]).toBeCloseTo(2.9183071154268285, 8);
    expect(sigmas[2]).toBeCloseTo(0.9323579668348474, 8);
  });

  it('scaleModelInput divides by sqrt(sigma^2 + 1)', () => {
    const s = createEulerScheduler(tinyConfig, 20);
    expect(s.scaleModelInput(Float32Array.of(11.0283 * 2), 0)[0]).toBeCloseTo(
      (11.0283 * 2) / Math.sqrt(11.0283 ** 2 + 1),
      3,
    );
  });
});

// An oracle that predicts the exact noise (or v, or x0) must lead every sampler to the clean sample x0.
describe.each([
  ['Euler', 'epsilon', 'leading'],
  ['Euler', 'v_prediction', 'trailing'],
  ['Euler', 'sample', 'linspace'],
  ['DDIM', 'epsilon', 'leading'],
  ['DDIM', 'v_prediction', 'trailing'],
  ['DDIM', 'sample', 'trailing'],
] as const)('%s with an exact %s oracle (%s spacing)', (kind, prediction, spacing) => {
  it('denoises to the clean sample', () => {
    // DDIM steps back by floor(1000 / steps), which matches the next timestep for leading/trailing spacing when
    // steps divides 1000; set_alpha_to_one makes the last step land on x0 itself.
    const config = sd({
      prediction_type: prediction,
      timestep_spacing: spacing,
      steps_offset: spacing === 'leading' ? 1 : 0,
      set_alpha_to_one: true,
    });
    const steps = 10;
    const s: Scheduler = kind === 'Euler' ? createEulerScheduler(config, steps) : createDdimScheduler(config, steps);
    const ac = alphasCumprod(config);
    const x0 = Float32Array.from({ length: 64 }, (_, i) => Math.sin(i) * 0.8);
    const eps = Float32Array.from({ length: 64 }, (_, i) => Math.cos(i * 1.7));
    const { sigmas } = eulerSigmas(config, steps);
    // The starting sample, in each scheduler's own parameterisation.
    let x: Float32Array =
      kind === 'Euler'
        ? x0.map((v, j) => v + (sigmas[0] as number) * (eps[j] as number))
        : x0.map(
            (v, j) =>
              Math.sqrt(ac[s.timesteps[0] as number] as number) * v +
              Math.sqrt(1 - (ac[s.timesteps[0] as number] as number)) * (eps[j] as number),
          );
    for (let i = 0; i < s.timesteps.length; i++) {
      const input = s.scaleModelInput(x, i);
      // Every sampler's input is sqrt(a) x0 + sqrt(1 - a) eps for the alpha of this step.
      const a = kind === 'Euler' ? 1 / ((sigmas[i] as number) ** 2 + 1) : (ac[s.timesteps[i] as number] as number);
      const current = x0.map((v, j) => ((input[j] as number) - Math.sqrt(a) * v) / Math.sqrt(1 - a));
      const out =
        prediction === 'epsilon'
          ? current
          : prediction === 'v_prediction'
            ? current.map((e, j) => Math.sqrt(a) * e - Math.sqrt(1 - a) * (x0[j] as number))
            : x0;
      x = s.step(out, i, x);
    }
    x.forEach((v, j) => expect(v).toBeCloseTo(x0[j] as number, 3));
  });
});

describe('DDIM', () => {
  it('without set_alpha_to_one the last step keeps alphas_cumprod[0] of noise, as diffusers does', () => {
    const s = createDdimScheduler(tinyConfig, 10);
    const ac = alphasCumprod(tinyConfig);
    const last = s.timesteps.length - 1;
    const a = ac[s.timesteps[last] as number] as number;
    const x = Float32Array.of(Math.sqrt(a) * 0.5 + Math.sqrt(1 - a) * 1);
    const out = s.step(Float32Array.of(1), last, x);
    expect(out[0]).toBeCloseTo(Math.sqrt(ac[0] as number) * 0.5 + Math.sqrt(1 - (ac[0] as number)), 5);
  });
});

describe('createScheduler', () => {
  it('follows _class_name, or the requested kind', () => {
    expect(createScheduler(tinyConfig, 20).initNoiseSigma).toBeGreaterThan(11);
    expect(createScheduler(sd({ _class_name: 'DDIMScheduler' }), 20).initNoiseSigma).toBe(1);
    expect(createScheduler(tinyConfig, 20, 'ddim').initNoiseSigma).toBe(1);
  });
});
