import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadOnDevice } from '@berth/worker';
import { env, pipeline, type TextGenerationPipeline } from '@huggingface/transformers';

/**
 * The model folder: `$BERTH_MODELS_DIR/stories260K` (a transformers.js folder: config.json, tokenizer.json,
 * onnx/model.onnx). Set BERTH_TEXT_MODEL to use another folder.
 */
export function modelDir(): string {
  const explicit = process.env['BERTH_TEXT_MODEL'];
  if (explicit) return resolve(explicit);
  const root = process.env['BERTH_MODELS_DIR'];
  if (!root)
    throw new Error('set BERTH_MODELS_DIR to the folder holding stories260K/ (or BERTH_TEXT_MODEL to a model folder)');
  return resolve(root, 'stories260K');
}

let loading: Promise<TextGenerationPipeline> | undefined;

/** Loads the model once per worker process (the cold start), from local files only. */
export function loadGenerator(): Promise<TextGenerationPipeline> {
  loading ??= (async () => {
    const dir = modelDir();
    if (!existsSync(join(dir, 'config.json'))) throw new Error(`no model in ${dir} (config.json missing)`);
    env.allowRemoteModels = false;
    // BERTH_DEVICE (default auto): CUDA when it loads, else the CPU (one log line says which).
    const { value } = await loadOnDevice(
      async (device) => (await pipeline('text-generation', dir, { dtype: 'fp32', device })) as TextGenerationPipeline,
    );
    return value;
  })();
  return loading;
}
