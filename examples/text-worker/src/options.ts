import { isAbsolute, join } from 'node:path';

/**
 * Options of the sample text worker. Each can be set in code (`createTextWorker({...})`) or by an environment
 * variable, which wins.
 */
export interface TextWorkerOptions {
  /**
   * A hub id (`HuggingFaceTB/SmolLM2-135M-Instruct`) or a local transformers.js folder (absolute, or starting with
   * `./`, `../` or `/`). Env `BERTH_TEXT_MODEL`. Default: `$BERTH_MODELS_DIR/stories260K` when `BERTH_MODELS_DIR`
   * is set, otherwise `HuggingFaceTB/SmolLM2-135M-Instruct`.
   */
  model?: string;
  /** Weights variant: `fp32`, `fp16`, `q8`, `q4`, ... Env `BERTH_TEXT_DTYPE`. Default: `q4` for the hub default, else the model's own choice. */
  dtype?: string;
  /** `auto` (CUDA when it loads, else the CPU), `cpu`, `cuda`, `webgpu`, ... Env `BERTH_TEXT_DEVICE`, else `BERTH_DEVICE`. Default `auto`. */
  device?: string;
  /** Allow downloads from the hub. Env `BERTH_TEXT_ALLOW_REMOTE` (`1`/`0`). Default: off for local folders, on for hub ids. */
  allowRemote?: boolean;
  /** The model id reported in responses and by `/models`. Env `BERTH_TEXT_MODEL_NAME`. Default: the hub id, or a local folder's name. */
  modelName?: string;
  /** Most sequences decoded together in one forward pass. Env `BERTH_TEXT_MAX_BATCH`. Default: the worker's concurrency (at least 1). */
  maxBatch?: number;
  /** Override of the context length (prompt + completion tokens). Env `BERTH_TEXT_CONTEXT`. Default: from the model config. */
  contextLength?: number;
  /**
   * onnxruntime threads per forward pass (`intraOpNumThreads`). Env `BERTH_TEXT_THREADS`. Default: onnxruntime's
   * choice (one per core). 1 leaves the other cores to the control plane and clients on a small machine.
   */
  threads?: number;
  /** Keep generating past end-of-sequence tokens (benchmarks: every request makes exactly max_tokens). Env `BERTH_TEXT_IGNORE_EOS=1`. Default false. */
  ignoreEos?: boolean;
  /**
   * Run the model in an engine thread (a `worker_threads` worker), so its forward passes overlap the main thread's
   * per-token protocol work. Env `BERTH_TEXT_ENGINE_THREAD` (`1`/`0`). Default true.
   */
  engineThread?: boolean;
}

export interface ResolvedTextWorkerOptions {
  model: string;
  local: boolean;
  dtype: string | undefined;
  device: string;
  allowRemote: boolean;
  modelName: string;
  maxBatch: number;
  contextLength: number | undefined;
  threads: number | undefined;
  ignoreEos: boolean;
  engineThread: boolean;
}

export const HUB_DEFAULT_MODEL = 'HuggingFaceTB/SmolLM2-135M-Instruct';
export const HUB_DEFAULT_DTYPE = 'q4';

/** A local folder path rather than a hub id. */
export function isLocalPath(model: string): boolean {
  return isAbsolute(model) || model.startsWith('./') || model.startsWith('../');
}

function envStr(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

function envInt(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const raw = envStr(env, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(raw)})`);
  return n;
}

/** Applies environment overrides and defaults; throws naming the bad variable. */
export function resolveTextWorkerOptions(o: TextWorkerOptions, env: NodeJS.ProcessEnv): ResolvedTextWorkerOptions {
  const modelsDir = envStr(env, 'BERTH_MODELS_DIR');
  const explicit = envStr(env, 'BERTH_TEXT_MODEL') ?? o.model;
  const model = explicit ?? (modelsDir ? join(modelsDir, 'stories260K') : HUB_DEFAULT_MODEL);
  const local = isLocalPath(model);
  const remoteEnv = envStr(env, 'BERTH_TEXT_ALLOW_REMOTE');
  if (remoteEnv !== undefined && !['0', '1', 'true', 'false'].includes(remoteEnv)) {
    throw new Error(`BERTH_TEXT_ALLOW_REMOTE must be 1 or 0 (got ${JSON.stringify(remoteEnv)})`);
  }
  const allowRemote = remoteEnv !== undefined ? remoteEnv === '1' || remoteEnv === 'true' : (o.allowRemote ?? !local);
  const dtype =
    envStr(env, 'BERTH_TEXT_DTYPE') ?? o.dtype ?? (model === HUB_DEFAULT_MODEL ? HUB_DEFAULT_DTYPE : undefined);
  const concurrency = envInt(env, 'BERTH_CONCURRENCY', 1, 1024);
  const threadEnv = envStr(env, 'BERTH_TEXT_ENGINE_THREAD');
  if (threadEnv !== undefined && !['0', '1', 'true', 'false'].includes(threadEnv))
    throw new Error(`BERTH_TEXT_ENGINE_THREAD must be 1 or 0 (got ${JSON.stringify(threadEnv)})`);
  return {
    model,
    local,
    dtype,
    device: envStr(env, 'BERTH_TEXT_DEVICE') ?? o.device ?? envStr(env, 'BERTH_DEVICE') ?? 'auto',
    allowRemote,
    modelName:
      envStr(env, 'BERTH_TEXT_MODEL_NAME') ??
      o.modelName ??
      (local ? model.replace(/\/+$/, '').split('/').pop()! : model),
    maxBatch: envInt(env, 'BERTH_TEXT_MAX_BATCH', 1, 256) ?? o.maxBatch ?? concurrency ?? 16,
    contextLength: envInt(env, 'BERTH_TEXT_CONTEXT', 2, 1_000_000) ?? o.contextLength,
    threads: envInt(env, 'BERTH_TEXT_THREADS', 1, 256) ?? o.threads,
    ignoreEos: envStr(env, 'BERTH_TEXT_IGNORE_EOS') === '1' || (o.ignoreEos ?? false),
    engineThread: threadEnv !== undefined ? threadEnv === '1' || threadEnv === 'true' : (o.engineThread ?? true),
  };
}
