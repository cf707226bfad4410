import { createLogger, start } from '@berth/worker';
import { createTextHandler } from '../src/handler.js';
import { loadTokenizer } from '../src/load.js';
import { resolveTextWorkerOptions } from '../src/options.js';
import { TextModel } from '../src/text-model.js';
import { FakeEngine, itersFromEnv, reportBurntOnSignal } from './fake-model.js';

// The text worker's handler (OpenAI route, streaming) on the fake model of fake-model.ts: the real tokenizer for
// prompts (BERTH_TEXT_MODEL, default stories260K's), a busy loop of BERTH_FAKE_ITERS per token for the forward pass.
// Started by scripts/overhead.ts through `berth dev`.
reportBurntOnSignal('fake-text');
try {
  const tokenizer = await loadTokenizer(resolveTextWorkerOptions({}, process.env));
  const model = new TextModel(new FakeEngine(itersFromEnv()), tokenizer, 4096, 'fake');
  start({ handler: createTextHandler(model), concurrency: 16, name: 'fake-text-worker' });
} catch (err) {
  createLogger().error((err as Error).message);
  process.exit(1);
}
