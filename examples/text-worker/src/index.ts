/**
 * The sample text worker: a transformers.js causal LM behind a continuous-batching engine, serving plain
 * `/run` inputs and Berth's OpenAI-compatible route.
 *
 * @example
 * const worker = await createTextWorker({ model: '/models/stories260K' });
 * start({ handler: worker.handler, concurrency: worker.options.maxBatch });
 */
import { createLogger, type Handler, type Logger } from '@berth/worker';
import { BatchEngine } from './engine/batch-engine.js';
import { createTextHandler } from './handler.js';
import { loadModel, type LoadedModel } from './load.js';
import { resolveTextWorkerOptions, type ResolvedTextWorkerOptions, type TextWorkerOptions } from './options.js';
import { TextModel } from './text-model.js';

export { ModelLoadError } from './load.js';
export type { TextWorkerOptions } from './options.js';

export interface TextWorker {
  handler: Handler;
  model: TextModel;
  loaded: LoadedModel;
  options: ResolvedTextWorkerOptions;
}

/** Loads the model (the cold start: download progress and load time are logged) and builds the handler. */
export async function createTextWorker(
  options: TextWorkerOptions = {},
  log: Logger = createLogger(),
): Promise<TextWorker> {
  const o = resolveTextWorkerOptions(options, process.env);
  const loaded = await loadModel(o, log);
  const decode = (ids: number[]) => loaded.tokenizer.decode(ids, { skip_special_tokens: true });
  const engine = new BatchEngine(loaded.model, {
    decode,
    eosTokenIds: o.ignoreEos ? [] : loaded.eosTokenIds,
    contextLength: loaded.contextLength,
    maxBatch: o.maxBatch,
  });
  const model = new TextModel(engine, loaded.tokenizer, loaded.contextLength, o.modelName);
  return { handler: createTextHandler(model), model, loaded, options: o };
}
