import * as ort from 'onnxruntime-node';
import type { Diffusion } from './model.js';

export interface GenerateParams {
  prompt: string;
  width: number;
  height: number;
  steps: number;
  guidance: number;
  seed: number;
}

/**
 * Text to RGB pixels for several prompts of the same size and step count, in one pass per step: encode the prompts
 * (and empty ones, for classifier-free guidance), denoise each seeded noise with the Euler scheduler (scaled-linear
 * betas, "leading" timesteps, epsilon prediction), decode with the VAE. `onStep(k, step)` reports image k's
 * progress; stops with the reason once every signal fired. Each image is the one `generateMany([p])` would draw.
 */
export async function generateMany(
  m: Diffusion,
  params: readonly GenerateParams[],
  onStep: (k: number, step: number) => void,
  signals: readonly AbortSignal[],
): Promise<{ rgb: Uint8Array; width: number; height: number }[]> {
  const n = params.length;
  const { width, height, steps } = params[0]!;
  if (params.some((p) => p.width !== width || p.height !== height || p.steps !== steps))
    throw new Error('generateMany: every image of a pass needs the same width, height and steps');
  const h = height / m.vaeScale;
  const w = width / m.vaeScale;
  const size = 4 * h * w;
  // Rows 0..n-1: the empty prompt (unconditioned), rows n..2n-1: the prompts.
  const tokens = m.tokenize([...params.map(() => ''), ...params.map((p) => p.prompt)]);
  const encoded = await m.textEncoder.run({
    input_ids: new ort.Tensor('int32', Int32Array.from(tokens.ids), tokens.dims),
  });
  const hidden = encoded['last_hidden_state']!;

  const { timesteps, sigmas } = eulerSchedule(m.scheduler, steps);
  const init = Math.sqrt(sigmas[0]! ** 2 + 1);
  let latents = new Float32Array(n * size);
  params.forEach((p, k) =>
    latents.set(
      noise(size, p.seed).map((v) => v * init),
      k * size,
    ),
  );
  const stopIfAllAborted = () => {
    if (signals.length > 0 && signals.every((s) => s.aborted)) signals[0]!.throwIfAborted();
  };

  for (let i = 0; i < timesteps.length; i++) {
    stopIfAllAborted();
    const sigma = sigmas[i]!;
    const scaled = new Float32Array(n * size * 2);
    for (let j = 0; j < n * size; j++) scaled[j] = scaled[n * size + j] = latents[j]! / Math.sqrt(sigma * sigma + 1);
    const t = BigInt(timesteps[i]!);
    const out = await m.unet.run({
      sample: new ort.Tensor('float32', scaled, [2 * n, 4, h, w]),
      timestep: new ort.Tensor('int64', new BigInt64Array(2 * n).fill(t), [2 * n]),
      encoder_hidden_states: hidden,
    });
    const eps = out[m.unet.outputNames[0]!]!.data as Float32Array;
    const dt = sigmas[i + 1]! - sigma;
    const next = new Float32Array(n * size);
    for (let k = 0; k < n; k++) {
      const g = params[k]!.guidance;
      for (let j = k * size; j < (k + 1) * size; j++) {
        const e = eps[j]! + g * (eps[n * size + j]! - eps[j]!);
        next[j] = latents[j]! + e * dt; // Euler step: (x - x0) / sigma is the predicted noise itself
      }
      onStep(k, i + 1);
    }
    latents = next;
  }
  for (let j = 0; j < n * size; j++) latents[j]! /= m.scalingFactor;
  const decoded = await m.vaeDecoder.run({ latent_sample: new ort.Tensor('float32', latents, [n, 4, h, w]) });
  const px = decoded[m.vaeDecoder.outputNames[0]!]!.data as Float32Array;
  const plane = width * height;
  return params.map((_, k) => {
    const rgb = new Uint8Array(plane * 3);
    const base = k * 3 * plane;
    for (let i = 0; i < plane; i++)
      for (let c = 0; c < 3; c++)
        rgb[i * 3 + c] = Math.max(0, Math.min(255, Math.round((px[base + c * plane + i]! / 2 + 0.5) * 255)));
    return { rgb, width, height };
  });
}

/** Timesteps ("leading" spacing) and their sigmas, with a final 0. */
export function eulerSchedule(s: Diffusion['scheduler'], steps: number): { timesteps: number[]; sigmas: number[] } {
  const n = s.num_train_timesteps;
  const a = Math.sqrt(s.beta_start);
  const b = Math.sqrt(s.beta_end);
  const all: number[] = [];
  let acc = 1;
  for (let i = 0; i < n; i++) {
    acc *= 1 - (a + ((b - a) * i) / (n - 1)) ** 2;
    all.push(Math.sqrt((1 - acc) / acc));
  }
  const ratio = Math.floor(n / steps);
  const timesteps = Array.from({ length: steps }, (_, k) => (steps - 1 - k) * ratio + s.steps_offset);
  return { timesteps, sigmas: [...timesteps.map((t) => all[Math.min(t, n - 1)]!), 0] };
}

/** Standard normal noise from a seed (mulberry32 + Box-Muller): the same seed gives the same image. */
export function noise(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rand()));
    const th = 2 * Math.PI * rand();
    out[i] = r * Math.cos(th);
    if (i + 1 < n) out[i + 1] = r * Math.sin(th);
  }
  return out;
}
