import { LOG_LEVELS, createLogger, start, type LogLevel } from '@berth/worker';
import { createTextWorker } from './src/index.js';
import { TextInput } from './src/input-schema.js';

// The text worker: loads the model first (the worker counts as initializing, a cold start, until then), then
// serves jobs. Configure it with BERTH_TEXT_MODEL, BERTH_TEXT_DTYPE, BERTH_TEXT_DEVICE, BERTH_MODELS_DIR (see README).
const level = (process.env['BERTH_LOG_LEVEL'] ?? 'info').toLowerCase();
const log = createLogger({
  level: (LOG_LEVELS as readonly string[]).includes(level) ? (level as LogLevel) : 'info',
  bindings: { workerId: process.env['BERTH_WORKER_ID'] ?? 'text-worker' },
});
try {
  const worker = await createTextWorker({}, log);
  // inputSchema: the playground builds its form from it (plain /run inputs; the OpenAI route's pass through).
  start({
    handler: worker.handler,
    concurrency: worker.options.maxBatch,
    name: `text-worker (${worker.options.modelName})`,
    inputSchema: TextInput,
  });
} catch (err) {
  log.error((err as Error).message);
  process.exit(1);
}
