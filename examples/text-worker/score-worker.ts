import { LOG_LEVELS, createLogger, start, type LogLevel } from '@berth/worker';
import { loadModel } from './src/load.js';
import { resolveTextWorkerOptions } from './src/options.js';
import { createScoreHandler } from './src/score/handler.js';
import { ScoreInput } from './src/score/input-schema.js';

// The `score` endpoint: the same model as worker.ts (BERTH_TEXT_MODEL, BERTH_MODELS_DIR, ...), no generation: each
// job's text is scored, the jobs of a batch in one forward pass. BERTH_BATCH_MAX_SIZE / BERTH_BATCH_MAX_WAIT_MS
// override the batch settings (docs/batching.md).
const level = (process.env['BERTH_LOG_LEVEL'] ?? 'info').toLowerCase();
const log = createLogger({
  level: (LOG_LEVELS as readonly string[]).includes(level) ? (level as LogLevel) : 'info',
  bindings: { workerId: process.env['BERTH_WORKER_ID'] ?? 'score-worker' },
});
try {
  const options = resolveTextWorkerOptions({}, process.env);
  const loaded = await loadModel(options, log);
  start({
    name: `score-worker (${options.modelName})`,
    inputSchema: ScoreInput,
    batch: { maxSize: 16, maxWaitMs: 5 },
    handler: createScoreHandler(loaded),
  });
} catch (err) {
  log.error((err as Error).message);
  process.exit(1);
}
