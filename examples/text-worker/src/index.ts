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
import { checkLocalFolder, loadModel, loadTokenizer } from './load.js';
import { resolveTextWorkerOptions, type ResolvedTextWorkerOptions, type TextWorkerOptions } from './options.js';
import { TextModel } from './text-model.js';
import { ThreadEngine, threadEntry } from './thread/thread-engine.js';

export { ModelLoadError } from './load.js';
export type { TextWorkerOptions } from './options.js';

export interface TextWorker {
  handler: Handler;
  model: TextModel;
  options: ResolvedTextWorkerOptions;
  /** Stops the engine (its thread, or frees the model). */
  close(): Promise<void>;
}

/**
 * Loads the model (the cold start: download progress and load time are logged) and builds the handler. By default
 * the model runs in an engine thread (`engineThread`), so forward passes overlap the main thread's job protocol.
 */
export async function createTextWorker(
  options: TextWorkerOptions = {},
  log: Logger = createLogger(),
): Promise<TextWorker> {
  const o = resolveTextWorkerOptions(options, process.env);
  const threaded = o.engineThread && threadEntry() !== undefined;
  if (o.engineThread && !threaded)
    log.info('no engine thread file (a bundled build): the model runs on the main thread');
  if (threaded) {
    if (o.local) checkLocalFolder(o.model); // a clear error before a thread starts
    const engine = await ThreadEngine.start(o, process.env['BERTH_LOG_LEVEL']?.toLowerCase() ?? 'info');
    try {
      const tokenizer = await loadTokenizer(o);
      const model = new TextModel(engine, tokenizer, engine.info.contextLength, o.modelName);
      return { handler: createTextHandler(model), model, options: o, close: () => engine.close() };
    } catch (err) {
      await engine.close();
      throw err;
    }
  }
  const loaded = await loadModel(o, log);
  const decode = (ids: number[]) => loaded.tokenizer.decode(ids, { skip_special_tokens: true });
  const engine = new BatchEngine(loaded.model, {
    decode,
    eosTokenIds: o.ignoreEos ? [] : loaded.eosTokenIds,
    contextLength: loaded.contextLength,
    maxBatch: o.maxBatch,
  });
  const model = new TextModel(engine, loaded.tokenizer, loaded.contextLength, o.modelName);
  return {
    handler: createTextHandler(model),
    model,
    options: o,
    close: async () => void (await loaded.model.dispose()),
  };
}
