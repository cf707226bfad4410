import { createLogger, start } from '@berth/worker';
import { loadModel } from '../src/load.js';
import { resolveTextWorkerOptions } from '../src/options.js';
import { createScoreHandler } from '../src/score/handler.js';
import { ScoreInput } from '../src/score/input-schema.js';

// For bench-batch.ts only: the `score` endpoint's model and code, one job per forward pass (a per-job handler,
// concurrency 1), the baseline the batched endpoint is measured against.
const loaded = await loadModel(resolveTextWorkerOptions({}, process.env), createLogger({ level: 'warn' }));
const batch = createScoreHandler(loaded);
start({
  name: 'score-unbatched',
  inputSchema: ScoreInput,
  concurrency: 1,
  handler: async (job) => {
    const [out] = await batch([job]);
    if (out instanceof Error) throw out;
    return out;
  },
});
