import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { AutoModelForCausalLM, AutoTokenizer, env } from '@huggingface/transformers';
import { loadOnDevice, type Logger } from '@berth/worker';
import type { CausalLM } from './engine/batch-engine.js';
import type { ResolvedTextWorkerOptions } from './options.js';

/** The tokenizer calls the worker uses. */
export interface TextTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  decode(ids: number[], options?: { skip_special_tokens?: boolean }): string;
  apply_chat_template(
    messages: { role: string; content: string }[],
    options: { add_generation_prompt: boolean; tokenize: false },
  ): string;
}

export interface LoadedModel {
  model: CausalLM & { dispose(): Promise<unknown> };
  tokenizer: TextTokenizer;
  eosTokenIds: number[];
  contextLength: number;
  /** Wall time of the load, ms (the cold start). */
  loadMs: number;
}

/** The model folder (or hub id) cannot be loaded; the message says what is missing and how to fix it. */
export class ModelLoadError extends Error {
  override readonly name = 'ModelLoadError';
}

const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];

/** Checks a local model folder before loading, so a missing folder or file is reported by name. */
export function checkLocalFolder(dir: string): void {
  if (!existsSync(dir)) {
    throw new ModelLoadError(
      `model folder ${dir} does not exist. Point BERTH_TEXT_MODEL at a transformers.js folder (config.json, tokenizer.json, onnx/model.onnx) or at a hub id, or fix BERTH_MODELS_DIR`,
    );
  }
  const missing = REQUIRED_FILES.filter((f) => !existsSync(join(dir, f)));
  if (!existsSync(join(dir, 'onnx'))) missing.push('onnx/');
  if (missing.length)
    throw new ModelLoadError(
      `model folder ${dir} is missing ${missing.join(', ')}; a transformers.js text model needs config.json, tokenizer.json, tokenizer_config.json and onnx/model*.onnx`,
    );
}

/** What transformers.js loads: a local folder made absolute, or the hub id. */
function modelId(o: ResolvedTextWorkerOptions): string {
  return o.local && !isAbsolute(o.model) ? join(process.cwd(), o.model) : o.model;
}

/**
 * Loads only the tokenizer (the main thread's share when the model runs in an engine thread, which has loaded or
 * downloaded the folder first).
 */
export async function loadTokenizer(
  o: ResolvedTextWorkerOptions,
  progress?: (p: { status: string }) => void,
): Promise<TextTokenizer & { model_max_length?: number }> {
  env.allowRemoteModels = o.allowRemote;
  return (await AutoTokenizer.from_pretrained(modelId(o), {
    ...(progress ? { progress_callback: progress } : {}),
  })) as unknown as TextTokenizer & { model_max_length?: number };
}

/**
 * Loads tokenizer and model with transformers.js. Local folders load with remote loading off (and no progress
 * lines); hub ids download into the transformers.js cache (progress is logged, at most one line per file per 10%).
 */
export async function loadModel(o: ResolvedTextWorkerOptions, log: Logger): Promise<LoadedModel> {
  const started = performance.now();
  env.allowRemoteModels = o.allowRemote;
  if (o.local) checkLocalFolder(o.model);
  log.info('loading model (cold start)', {
    model: o.model,
    dtype: o.dtype ?? 'default',
    device: o.device,
    remote: o.allowRemote,
  });
  const lastPct = new Map<string, number>();
  const progress = (p: { status: string; file?: string; progress?: number; loaded?: number; total?: number }) => {
    // A local folder is read, not downloaded: its "progress" is not worth a log line.
    if (o.local || p.status !== 'progress' || !p.file || p.progress === undefined) return;
    const step = Math.floor(p.progress / 10) * 10;
    if ((lastPct.get(p.file) ?? -1) >= step) return;
    lastPct.set(p.file, step);
    log.info('model download', { file: p.file, percent: step, loaded: p.loaded, total: p.total });
  };
  const id = modelId(o);
  try {
    const tokenizer = await loadTokenizer(o, progress);
    type Model = LoadedModel['model'] & {
      config: Record<string, unknown>;
      generation_config?: Record<string, unknown> | null;
    };
    const load = async (device: string): Promise<Model> =>
      (await AutoModelForCausalLM.from_pretrained(id, {
        ...(o.dtype ? { dtype: o.dtype as 'fp32' } : {}),
        device: device as 'cpu',
        ...(o.threads ? { session_options: { intraOpNumThreads: o.threads, interOpNumThreads: 1 } } : {}),
        progress_callback: progress,
      })) as unknown as Model;
    // auto (the default, from BERTH_DEVICE): CUDA when it loads, else the CPU with one log line; other devices as given.
    const model = ['auto', 'cpu', 'cuda'].includes(o.device)
      ? (
          await loadOnDevice(load, {
            env: { BERTH_DEVICE: o.device },
            log: (line) => log.info(line, { model: o.model }),
          })
        ).value
      : await load(o.device);
    const eos = model.generation_config?.['eos_token_id'] ?? model.config['eos_token_id'];
    const eosTokenIds = (Array.isArray(eos) ? eos : [eos]).filter((x): x is number => typeof x === 'number');
    const ctx = model.config['max_position_embeddings'];
    const contextLength = o.contextLength ?? (typeof ctx === 'number' ? ctx : (tokenizer.model_max_length ?? 2048));
    const loadMs = performance.now() - started;
    log.info('model loaded', { model: o.model, loadMs: Math.round(loadMs), contextLength, eosTokenIds });
    return { model, tokenizer, eosTokenIds, contextLength, loadMs };
  } catch (err) {
    if (err instanceof ModelLoadError) throw err;
    const hint = o.allowRemote ? '' : ' (remote loading is off: the files must be in the folder)';
    throw new ModelLoadError(`could not load model ${o.model}${hint}: ${(err as Error).message}`);
  }
}
