import type * as ort from 'onnxruntime-node';
import { gaussianNoise } from '../noise/gaussian.js';
import { createScheduler } from '../scheduler/index.js';
import type { DiffusionModel } from './load.js';
import { inputShape, inputType, toFloat32, toTensor } from './tensors.js';

/** One text-to-image request, already validated. */
export interface GenerateParams {
  prompt: string;
  /** What to steer away from (the unconditional branch of classifier-free guidance). Default `''`. */
  negativePrompt?: string;
  /** Pixels; a multiple of the model's VAE scale factor. */
  width: number;
  height: number;
  steps: number;
  /** Classifier-free guidance scale; at 1 or below the unconditional pass is skipped (SD-Turbo uses 0). */
  guidance: number;
  seed: number;
  /** Override the scheduler named by `scheduler_config.json`. */
  scheduler?: 'euler' | 'ddim';
}

/** Knobs for callers and benchmarks. */
export interface GenerateOptions {
  /** Called after each denoising step with 1-based `step` of `total`. */
  onStep?: (step: number, total: number) => void;
  /** Checked before every step; an aborted signal throws its reason. */
  signal?: AbortSignal;
  /** Run conditional and unconditional passes as one UNet call of batch 2. Default `true` (off: two calls, for comparison). */
  batchGuidance?: boolean;
  /** Starting latent noise (standard normal, `latentChannels * h * w` values) instead of `gaussianNoise(size, seed)`; video interpolates it between seeds. */
  noise?: Float32Array;
  /** Text-encoder output (`encodeText`) instead of encoding the prompts: `[negative, prompt]` when guidance > 1, else `[prompt]`. */
  embeddings?: TextEmbeddings;
}

/** Text-encoder hidden states of a batch of prompts: `dims` [batch, tokens, width]. */
export interface TextEmbeddings {
  data: Float32Array;
  dims: number[];
}

/** A decoded image: `width * height * 3` bytes of RGB, row-major. */
export interface RgbImage {
  data: Uint8Array;
  width: number;
  height: number;
}

/**
 * Runs the diffusion loop: tokenize and encode prompt (and negative prompt), seeded latent noise, `steps` scheduler
 * steps with classifier-free guidance, VAE decode. Tensor dtypes (int32/int64 ids and timesteps, float16/float32
 * activations) follow each session's input metadata.
 *
 * @example const { data, width, height } = await generateImage(model, { prompt: 'a big red circle on a blue background', width: 64, height: 64, steps: 20, guidance: 5, seed: 1 });
 */
export async function generateImage(
  model: DiffusionModel,
  params: GenerateParams,
  options: GenerateOptions = {},
): Promise<RgbImage> {
  const f = model.vaeScaleFactor;
  if (params.width % f !== 0 || params.height % f !== 0) {
    throw new RangeError(`width and height must be multiples of ${f} (got ${params.width}x${params.height})`);
  }
  const guided = params.guidance > 1;
  const batchGuidance = options.batchGuidance ?? true;
  const texts = guided ? [params.negativePrompt ?? '', params.prompt] : [params.prompt];
  const embeddings = options.embeddings ?? (await encodeText(model, texts));
  if (embeddings.dims[0] !== texts.length)
    throw new RangeError(`embeddings must hold ${texts.length} prompt(s) (got ${embeddings.dims[0]})`);
  const perPrompt = embeddings.data.length / texts.length;

  const h = params.height / f;
  const w = params.width / f;
  const c = model.latentChannels;
  const size = c * h * w;
  const scheduler = createScheduler(model.scheduler, params.steps, params.scheduler);
  if (options.noise && options.noise.length !== size)
    throw new RangeError(`noise must hold ${size} values (got ${options.noise.length})`);
  let latents = options.noise ? Float32Array.from(options.noise) : gaussianNoise(size, params.seed);
  for (let j = 0; j < size; j++) latents[j] = (latents[j] as number) * scheduler.initNoiseSigma;

  const unetOut = model.unet.outputNames[0] as string;
  const sampleType = inputType(model.unet, 'sample');
  const hiddenType = inputType(model.unet, 'encoder_hidden_states');
  const total = scheduler.timesteps.length;
  for (let i = 0; i < total; i++) {
    options.signal?.throwIfAborted();
    const t = scheduler.timesteps[i] as number;
    const input = scheduler.scaleModelInput(latents, i);
    let noise: Float32Array;
    if (guided && batchGuidance) {
      const both = new Float32Array(size * 2);
      both.set(input, 0);
      both.set(input, size);
      const out = await runUnet(model, both, 2, t, embeddings.data, embeddings.dims, {
        h,
        w,
        c,
        sampleType,
        hiddenType,
        unetOut,
      });
      noise = new Float32Array(size);
      for (let j = 0; j < size; j++) {
        const u = out[j] as number;
        noise[j] = u + params.guidance * ((out[size + j] as number) - u);
      }
    } else if (guided) {
      const dims1 = [1, ...embeddings.dims.slice(1)];
      const uncond = await runUnet(model, input, 1, t, embeddings.data.subarray(0, perPrompt), dims1, {
        h,
        w,
        c,
        sampleType,
        hiddenType,
        unetOut,
      });
      const cond = await runUnet(model, input, 1, t, embeddings.data.subarray(perPrompt), dims1, {
        h,
        w,
        c,
        sampleType,
        hiddenType,
        unetOut,
      });
      noise = new Float32Array(size);
      for (let j = 0; j < size; j++)
        noise[j] = (uncond[j] as number) + params.guidance * ((cond[j] as number) - (uncond[j] as number));
    } else {
      noise = await runUnet(model, input, 1, t, embeddings.data, embeddings.dims, {
        h,
        w,
        c,
        sampleType,
        hiddenType,
        unetOut,
      });
    }
    latents = scheduler.step(noise, i, latents);
    options.onStep?.(i + 1, total);
  }
  options.signal?.throwIfAborted();
  return decodeLatents(model, latents, h, w);
}

/** Token ids padded/truncated to `model.maxLength`, through the text encoder, in one batch. */
export async function encodeText(model: DiffusionModel, texts: string[]): Promise<TextEmbeddings> {
  const encoded = model.tokenizer(texts, { padding: 'max_length', max_length: model.maxLength, truncation: true }) as {
    input_ids: { data: ArrayLike<bigint | number>; dims: number[] };
  };
  const ids = Array.from(encoded.input_ids.data, Number);
  const name = model.textEncoder.inputNames.includes('input_ids')
    ? 'input_ids'
    : (model.textEncoder.inputNames[0] as string);
  const feeds = { [name]: toTensor(inputType(model.textEncoder, name), ids, encoded.input_ids.dims) };
  const out = await model.textEncoder.run(feeds);
  const hidden = out['last_hidden_state'] ?? out[model.textEncoder.outputNames[0] as string];
  if (!hidden) throw new Error('the text encoder returned no hidden states');
  return { data: toFloat32(hidden), dims: [...hidden.dims] };
}

interface UnetShape {
  h: number;
  w: number;
  c: number;
  sampleType: string;
  hiddenType: string;
  unetOut: string;
}

async function runUnet(
  model: DiffusionModel,
  sample: Float32Array,
  batch: number,
  t: number,
  hidden: Float32Array,
  hiddenDims: readonly number[],
  s: UnetShape,
): Promise<Float32Array> {
  const feeds: Record<string, ort.Tensor> = {
    sample: toTensor(s.sampleType, sample, [batch, s.c, s.h, s.w]),
    timestep: timestepTensor(model.unet, t, batch),
    encoder_hidden_states: toTensor(s.hiddenType, hidden, hiddenDims),
  };
  const missing = model.unet.inputNames.filter((n) => !(n in feeds));
  if (missing.length)
    throw new Error(
      `the UNet needs inputs this pipeline does not provide: ${missing.join(', ')} (SDXL-style models are not supported)`,
    );
  const out = await model.unet.run(feeds);
  return toFloat32(out[s.unetOut] as ort.Tensor);
}

/**
 * The timestep in the UNet's declared dtype and shape: a scalar when the input is rank 0, `[batch]` when its first
 * dimension is fixed to the batch size or shares the sample's symbolic batch name, else `[1]` (broadcast).
 */
function timestepTensor(unet: ort.InferenceSession, t: number, batch: number): ort.Tensor {
  const type = inputType(unet, 'timestep');
  const shape = inputShape(unet, 'timestep');
  if (shape.length === 0) return toTensor(type, [t], []);
  const first = shape[0];
  const batchName = inputShape(unet, 'sample')[0];
  const n = typeof first === 'number' ? first : first === batchName ? batch : 1;
  return toTensor(type, new Array<number>(n).fill(t), [n]);
}

async function decodeLatents(model: DiffusionModel, latents: Float32Array, h: number, w: number): Promise<RgbImage> {
  const scaled = new Float32Array(latents.length);
  for (let j = 0; j < latents.length; j++) scaled[j] = (latents[j] as number) / model.scalingFactor;
  const name = model.vaeDecoder.inputNames[0] as string;
  const out = await model.vaeDecoder.run({
    [name]: toTensor(inputType(model.vaeDecoder, name), scaled, [1, model.latentChannels, h, w]),
  });
  const sample = out[model.vaeDecoder.outputNames[0] as string] as ort.Tensor;
  const [, channels, height, width] = sample.dims as [number, number, number, number];
  if (channels !== 3) throw new Error(`the VAE decoder returned ${channels} channels, expected 3`);
  const pixels = toFloat32(sample);
  const plane = height * width;
  const data = new Uint8Array(plane * 3);
  for (let p = 0; p < plane; p++) {
    for (let ch = 0; ch < 3; ch++) {
      const v = ((pixels[ch * plane + p] as number) / 2 + 0.5) * 255;
      data[p * 3 + ch] = v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
    }
  }
  return { data, width, height };
}
