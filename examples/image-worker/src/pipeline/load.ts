import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AutoTokenizer, type PreTrainedTokenizer } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';
import { parseSchedulerConfig, type SchedulerConfig } from '../scheduler/index.js';

/** A loaded ONNX Stable Diffusion folder (Optimum layout), ready for `generateImage`. */
export interface DiffusionModel {
  /** The folder it was loaded from. */
  dir: string;
  tokenizer: PreTrainedTokenizer;
  /** Tokens per prompt (padding and truncation length): `tokenizer_config.json` `model_max_length`, else the text encoder's `max_position_embeddings`, else 77. */
  maxLength: number;
  textEncoder: ort.InferenceSession;
  unet: ort.InferenceSession;
  vaeDecoder: ort.InferenceSession;
  scheduler: SchedulerConfig;
  /** Latent channels (`unet/config.json` `in_channels`, default 4). */
  latentChannels: number;
  /** Pixels per latent cell: 2^(len(vae block_out_channels) - 1) (8 for Stable Diffusion, 4 for tiny-sd). */
  vaeScaleFactor: number;
  /** `vae_decoder/config.json` `scaling_factor` (latents are divided by it before decoding). */
  scalingFactor: number;
  /** Native image size in pixels: `unet/config.json` `sample_size` times the VAE scale factor. */
  nativeSize: number;
  /** Seconds the load took. */
  loadSeconds: number;
}

/** Options of `loadDiffusionModel`. */
export interface LoadDiffusionOptions {
  /** Tokenizer folder or hub id to use instead of `<dir>/tokenizer` (for exports whose tokenizer has no `tokenizer.json`). Default: `<dir>/tokenizer`. */
  tokenizer?: string;
  /** onnxruntime session options for the three sessions. Default: CPU, graph optimisations on. */
  sessionOptions?: ort.InferenceSession.SessionOptions;
}

/**
 * Loads an ONNX Stable Diffusion folder as Optimum exports it: `model_index.json`, `scheduler/scheduler_config.json`,
 * `tokenizer/`, `text_encoder/model.onnx`, `unet/model.onnx`, `vae_decoder/model.onnx` and each part's `config.json`.
 *
 * @throws Error naming the missing file or unsupported setting.
 * @example const model = await loadDiffusionModel('/models/tiny-sd');
 */
export async function loadDiffusionModel(dir: string, options: LoadDiffusionOptions = {}): Promise<DiffusionModel> {
  const started = performance.now();
  const index = readJson(dir, 'model_index.json');
  for (const part of ['text_encoder', 'unet', 'vae_decoder']) {
    if (!existsSync(join(dir, part, 'model.onnx'))) {
      throw new Error(
        `${dir} is not an ONNX Stable Diffusion folder: ${part}/model.onnx is missing (export one with optimum-cli, see the image-worker README)`,
      );
    }
  }
  const pipelineClass = typeof index['_class_name'] === 'string' ? index['_class_name'] : '';
  if (/XL|Flux|SD3|StableDiffusion3/i.test(pipelineClass)) {
    throw new Error(
      `${pipelineClass} is not supported: this pipeline runs Stable Diffusion 1.x/2.x-style models (one text encoder)`,
    );
  }
  const scheduler = parseSchedulerConfig(readJson(dir, 'scheduler/scheduler_config.json'));
  const unetConfig = readJson(dir, 'unet/config.json', {});
  const vaeConfig = readJson(dir, 'vae_decoder/config.json', {});
  const textConfig = readJson(dir, 'text_encoder/config.json', {});
  const blocks = Array.isArray(vaeConfig['block_out_channels']) ? vaeConfig['block_out_channels'].length : 4;
  const vaeScaleFactor = 2 ** (blocks - 1);
  const sampleSize = numberOr(unetConfig['sample_size'], 64);

  const tokenizerPath = options.tokenizer ?? join(dir, 'tokenizer');
  const tokenizer = await AutoTokenizer.from_pretrained(tokenizerPath).catch((err: unknown) => {
    throw new Error(
      `cannot load the tokenizer from ${tokenizerPath} (it needs tokenizer.json; pass a tokenizer with one): ${err instanceof Error ? err.message : String(err)}`,
    );
  });
  const sessionOptions = options.sessionOptions ?? { executionProviders: ['cpu'], graphOptimizationLevel: 'all' };
  const [textEncoder, unet, vaeDecoder] = await Promise.all(
    ['text_encoder', 'unet', 'vae_decoder'].map((part) =>
      ort.InferenceSession.create(join(dir, part, 'model.onnx'), sessionOptions),
    ),
  );
  const maxLength = Math.min(
    numberOr((tokenizer as unknown as { model_max_length?: unknown }).model_max_length, Infinity),
    numberOr(textConfig['max_position_embeddings'], Infinity),
  );
  return {
    dir,
    tokenizer,
    maxLength: Number.isFinite(maxLength) ? maxLength : 77,
    textEncoder: textEncoder as ort.InferenceSession,
    unet: unet as ort.InferenceSession,
    vaeDecoder: vaeDecoder as ort.InferenceSession,
    scheduler,
    latentChannels: numberOr(unetConfig['in_channels'], 4),
    vaeScaleFactor,
    scalingFactor: numberOr(vaeConfig['scaling_factor'], 0.18215),
    nativeSize: sampleSize * vaeScaleFactor,
    loadSeconds: (performance.now() - started) / 1000,
  };
}

function readJson(dir: string, file: string, fallback?: Record<string, unknown>): Record<string, unknown> {
  const path = join(dir, file);
  if (!existsSync(path)) {
    if (fallback) return fallback;
    throw new Error(`${dir} is not an ONNX Stable Diffusion folder: ${file} is missing`);
  }
  const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${path} must hold a JSON object`);
  return value as Record<string, unknown>;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}
