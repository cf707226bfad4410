/**
 * A denoising scheduler over a fixed list of timesteps (index `i` = the `i`-th step, highest noise first).
 * Samples are flat `Float32Array`s of the latent (any shape; every operation is element-wise).
 */
export interface Scheduler {
  /** Timesteps passed to the UNet, highest first. Fractional for Euler with `linspace` spacing. */
  readonly timesteps: readonly number[];
  /** Standard deviation to scale the initial unit Gaussian noise by. */
  readonly initNoiseSigma: number;
  /** The UNet input for step `i` (a new array; `sample` is not modified). */
  scaleModelInput(sample: Float32Array, i: number): Float32Array;
  /** The sample after step `i` from the model's prediction (a new array). */
  step(modelOutput: Float32Array, i: number, sample: Float32Array): Float32Array;
}
