import { join } from 'node:path';
import type { UpscalerModels } from '../upscale/upscaler.js';

/** Hub defaults, used when neither `BERTH_MODELS_DIR` nor an explicit variable names a model. */
export const HUB_DEFAULTS = {
  /** SD-Turbo exported to ONNX (fp16). Its tokenizer folder has no tokenizer.json, hence `tokenizer`. */
  image: 'schmuell/sd-turbo-ort-web',
  /** A CLIP BPE tokenizer with a tokenizer.json (same vocabulary as Stable Diffusion's). */
  tokenizer: 'Xenova/clip-vit-base-patch32',
  upscaleX2: 'Xenova/swin2SR-classical-sr-x2-64',
  upscaleX4: 'Xenova/swin2SR-classical-sr-x4-64',
} as const;

/** Where the image worker's models come from, after reading the environment. */
export interface ModelLocations {
  /** Folder or hub id of the ONNX Stable Diffusion model. */
  image: string;
  /** Tokenizer override (folder or hub id) for model folders without `tokenizer/tokenizer.json`. */
  tokenizer: string | undefined;
  upscale: UpscalerModels;
  /** `false` when `BERTH_MODELS_DIR` is set or `HF_HUB_OFFLINE=1`: nothing is downloaded. */
  allowRemote: boolean;
  /** onnxruntime intra-op threads per session (`IMAGE_THREADS`); `undefined`: onnxruntime's default (all cores). */
  threads: number | undefined;
}

/**
 * Reads the model locations from the environment:
 *
 * | variable | default |
 * |---|---|
 * | `BERTH_MODELS_DIR` | unset; when set: `$BERTH_MODELS_DIR/tiny-sd`, `esrgan-x2`, `esrgan-x4`, remote loading off |
 * | `IMAGE_MODEL` | `$BERTH_MODELS_DIR/tiny-sd`, else `schmuell/sd-turbo-ort-web` (folder or hub id) |
 * | `IMAGE_TOKENIZER` | `<model>/tokenizer`; for the hub default `Xenova/clip-vit-base-patch32` |
 * | `UPSCALER_X2_MODEL` | `$BERTH_MODELS_DIR/esrgan-x2`, else `Xenova/swin2SR-classical-sr-x2-64` |
 * | `UPSCALER_X4_MODEL` | `$BERTH_MODELS_DIR/esrgan-x4`, else `Xenova/swin2SR-classical-sr-x4-64` |
 * | `HF_HUB_OFFLINE` | `1` turns remote loading off |
 * | `IMAGE_THREADS` | onnxruntime's default (one per core); a whole number 1-64 caps the threads each session uses |
 *
 * @example const where = resolveModelLocations(process.env);
 */
export function resolveModelLocations(env: NodeJS.ProcessEnv = process.env): ModelLocations {
  const dir = env['BERTH_MODELS_DIR']?.trim() || undefined;
  const pick = (name: string, local: string, hub: string): string =>
    env[name]?.trim() || (dir ? join(dir, local) : hub);
  const image = pick('IMAGE_MODEL', 'tiny-sd', HUB_DEFAULTS.image);
  const tokenizer =
    env['IMAGE_TOKENIZER']?.trim() || (image === HUB_DEFAULTS.image ? HUB_DEFAULTS.tokenizer : undefined);
  return {
    image,
    tokenizer,
    upscale: {
      2: pick('UPSCALER_X2_MODEL', 'esrgan-x2', HUB_DEFAULTS.upscaleX2),
      4: pick('UPSCALER_X4_MODEL', 'esrgan-x4', HUB_DEFAULTS.upscaleX4),
    },
    allowRemote: !dir && env['HF_HUB_OFFLINE'] !== '1',
    threads: threadsOf(env['IMAGE_THREADS']),
  };
}

function threadsOf(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new Error(`IMAGE_THREADS must be a whole number from 1 to 64 (got ${JSON.stringify(value)})`);
  return n;
}
