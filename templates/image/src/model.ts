import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadOnDevice } from '@berth/worker';
import { AutoTokenizer, env } from '@huggingface/transformers';
import * as ort from 'onnxruntime-node';

/** A Stable-Diffusion-style ONNX folder (text_encoder, unet, vae_decoder, tokenizer, scheduler), loaded. */
export interface Diffusion {
  tokenize(texts: string[]): { ids: number[]; dims: number[] };
  textEncoder: ort.InferenceSession;
  unet: ort.InferenceSession;
  vaeDecoder: ort.InferenceSession;
  scheduler: { num_train_timesteps: number; beta_start: number; beta_end: number; steps_offset: number };
  scalingFactor: number;
  /** Pixels per latent cell: 2^(VAE blocks - 1). */
  vaeScale: number;
}

/** `$BERTH_MODELS_DIR/tiny-sd`, or BERTH_IMAGE_MODEL. */
export function modelDir(): string {
  const explicit = process.env['BERTH_IMAGE_MODEL'];
  if (explicit) return resolve(explicit);
  const root = process.env['BERTH_MODELS_DIR'];
  if (!root)
    throw new Error('set BERTH_MODELS_DIR to the folder holding tiny-sd/ (or BERTH_IMAGE_MODEL to a model folder)');
  return resolve(root, 'tiny-sd');
}

let loading: Promise<Diffusion> | undefined;

/** Loads the three ONNX models and the tokenizer once per worker process (the cold start). */
export function loadDiffusion(): Promise<Diffusion> {
  loading ??= (async () => {
    const dir = modelDir();
    if (!existsSync(join(dir, 'model_index.json')))
      throw new Error(`no diffusion model in ${dir} (model_index.json missing)`);
    env.allowRemoteModels = false;
    const json = (f: string) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Record<string, unknown>;
    const tokenizer = await AutoTokenizer.from_pretrained(join(dir, 'tokenizer'));
    // BERTH_DEVICE (default auto): the CUDA execution provider when it loads, else the CPU (one log line says which).
    const { value: sessions } = await loadOnDevice((device) => {
      const session = (name: string) =>
        ort.InferenceSession.create(join(dir, name, 'model.onnx'), {
          executionProviders: device === 'cuda' ? ['cuda', 'cpu'] : ['cpu'],
        });
      return Promise.all([session('text_encoder'), session('unet'), session('vae_decoder')]);
    });
    const [textEncoder, unet, vaeDecoder] = sessions;
    const vae = json('vae_decoder/config.json');
    return {
      // The encoder attends to pad tokens: always pad to the length it was trained with.
      tokenize: (texts) => {
        const out = tokenizer(texts, { padding: 'max_length', max_length: 16, truncation: true }) as {
          input_ids: { data: ArrayLike<bigint | number>; dims: number[] };
        };
        return { ids: Array.from(out.input_ids.data, Number), dims: out.input_ids.dims };
      },
      textEncoder,
      unet,
      vaeDecoder,
      scheduler: json('scheduler/scheduler_config.json') as unknown as Diffusion['scheduler'],
      scalingFactor: Number(vae['scaling_factor'] ?? 1),
      vaeScale: 2 ** ((vae['block_out_channels'] as unknown[]).length - 1),
    };
  })();
  return loading;
}
