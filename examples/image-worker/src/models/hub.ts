import { existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** Files of an Optimum ONNX Stable Diffusion export that the pipeline reads. */
export const DIFFUSION_FILES = {
  required: [
    'model_index.json',
    'scheduler/scheduler_config.json',
    'text_encoder/model.onnx',
    'unet/model.onnx',
    'vae_decoder/model.onnx',
  ],
  optional: [
    'text_encoder/config.json',
    'unet/config.json',
    'vae_decoder/config.json',
    'tokenizer/tokenizer.json',
    'tokenizer/tokenizer_config.json',
    'tokenizer/special_tokens_map.json',
    // external weights of large exports
    'text_encoder/model.onnx_data',
    'unet/model.onnx_data',
    'unet/weights.pb',
    'vae_decoder/model.onnx_data',
  ],
};

/** Options of `ensureModelFolder`. */
export interface HubOptions {
  /** Download when `location` is not a folder. Default `true`. */
  allowRemote?: boolean;
  /** Hub host. Default `$HF_ENDPOINT`, else `https://huggingface.co`. */
  endpoint?: string;
  /** Cache root. Default `$BERTH_HUB_CACHE`, else `~/.cache/berth/hub`. */
  cacheDir?: string;
  /** Branch, tag or commit. Default `main`. */
  revision?: string;
  /** Called once per file downloaded. */
  onFile?: (file: string, bytes: number) => void;
}

/**
 * A local folder for `location`: the folder itself when it exists, else the hub repo `location` downloaded once
 * (`required` files must exist; `optional` ones are skipped on 404) into the cache.
 *
 * @throws Error naming the missing file, or saying remote loading is off.
 * @example const dir = await ensureModelFolder('schmuell/sd-turbo-ort-web', DIFFUSION_FILES);
 */
export async function ensureModelFolder(
  location: string,
  files: { required: string[]; optional: string[] },
  options: HubOptions = {},
): Promise<string> {
  if (existsSync(location) && statSync(location).isDirectory()) return location;
  if (location.startsWith('/') || location.startsWith('.') || !/^[\w.-]+\/[\w.-]+$/.test(location)) {
    throw new Error(`model folder not found: ${location}`);
  }
  if (options.allowRemote === false) {
    throw new Error(
      `model ${location} is not a local folder and remote loading is off (BERTH_MODELS_DIR or HF_HUB_OFFLINE is set)`,
    );
  }
  const endpoint = (options.endpoint ?? process.env['HF_ENDPOINT'] ?? 'https://huggingface.co').replace(/\/+$/, '');
  const revision = options.revision ?? 'main';
  const root = join(
    options.cacheDir ?? process.env['BERTH_HUB_CACHE'] ?? join(homedir(), '.cache', 'berth', 'hub'),
    location,
    revision,
  );
  const fetchOne = async (file: string, required: boolean): Promise<void> => {
    const target = join(root, file);
    if (existsSync(target)) return;
    const res = await fetch(`${endpoint}/${location}/resolve/${revision}/${file}`);
    if (res.status === 404 && !required) return;
    if (!res.ok) throw new Error(`downloading ${location}/${file}: HTTP ${res.status}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(`${target}.part`, bytes);
    renameSync(`${target}.part`, target);
    options.onFile?.(file, bytes.length);
  };
  for (const file of files.required) await fetchOne(file, true);
  for (const file of files.optional) await fetchOne(file, false);
  return root;
}
