/**
 * Benchmark (not a test) of the batched `score` endpoint, in one run, at client concurrency 1, 4, 16 and 32 (closed
 * loop: each client sends its next /runsync when the last one answers), on stories260K:
 *   - batched through Berth: `score-worker.ts` (batch handler, maxSize 16) under `berth dev`;
 *   - unbatched through Berth: the same model and code, one job per forward pass (`scripts/score-unbatched.ts`);
 *   - batched in-process, the endpoint's batch handler (`runBatch`: input check, tokenizing, forward pass) on
 *     batches of min(c, 16) requests: the same work without HTTP, queue or WebSocket (the goal's reference);
 *   - batched in-process, the model alone: `scoreMany` on batches of min(c, 16) pre-tokenized texts;
 *   - one by one in-process: `scoreMany` on one text at a time (what batching gains on this CPU).
 * Prints texts/s, p50 latency and the ratios, with the load average (the machine may be shared).
 *
 *   npm run build && node --import tsx examples/text-worker/scripts/bench-batch.ts
 *
 * Env: BERTH_MODELS_DIR (default ../shared/models), BENCH_PER_CLIENT (requests per client, default 8, at least 64
 * per level), BERTH_TEXT_THREADS (onnxruntime threads, default 1; `default` = onnxruntime's own choice).
 */
import { cpus } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '@berth/worker';
import { runBatch } from '@berth/worker/testing';
import { printBatchTable, runBatchBench } from '../../../tests/e2e/batch-bench.test-helpers.js';
import { loadModel } from '../src/load.js';
import { resolveTextWorkerOptions } from '../src/options.js';
import { createScoreHandler, scoreItem } from '../src/score/handler.js';
import { ScoreInput } from '../src/score/input-schema.js';
import { scoreMany } from '../src/score/scorer.js';
import { MODELS_DIR, STORIES } from '../src/testing.test-helpers.js';

const PER_CLIENT = Number(process.env['BENCH_PER_CLIENT'] ?? 8);
const THREADS = process.env['BERTH_TEXT_THREADS'] ?? '1';
const LEVELS = [1, 4, 16, 32];
const MAX_BATCH = 16;
const here = fileURLToPath(new URL('.', import.meta.url));
const requestsAt = (c: number) => Math.max(64, c * PER_CLIENT);
// About 60 tokens of context and text.
const input = {
  context: 'Once upon a time, there was a little girl named Lily. She loved to play outside in the park.',
  text: ' One day, she saw a big red ball under a tree. She ran to the ball and said, "Mom, can I play with it?"',
};

const loaded = await loadModel(
  resolveTextWorkerOptions({ model: STORIES }, THREADS === 'default' ? {} : { BERTH_TEXT_THREADS: THREADS }),
  createLogger({ level: 'warn' }),
);
const item = scoreItem(loaded, input);
const handler = createScoreHandler(loaded);
await scoreMany(loaded.model, Array(MAX_BATCH).fill(item));

try {
  const result = await runBatchBench({
    name: 'score',
    endpoints: (dir) => ({
      batched: { worker: relative(dir, join(here, '../score-worker.ts')), workers: 1, concurrency: 2 * MAX_BATCH },
      unbatched: { worker: relative(dir, join(here, 'score-unbatched.ts')), workers: 1 },
    }),
    env: {
      BERTH_MODELS_DIR: MODELS_DIR,
      BERTH_LOG_LEVEL: 'warn',
      BERTH_TEXT_THREADS: THREADS === 'default' ? '' : THREADS,
    },
    input,
    levels: LEVELS,
    maxBatch: MAX_BATCH,
    requestsAt,
    runInProcess: (_batched, k) => scoreMany(loaded.model, Array(k).fill(item)),
    runHandlerInProcess: (k) => runBatch(handler, Array(k).fill(input), { inputSchema: ScoreInput }),
    warmup: requestsAt(4),
  });
  printBatchTable(
    result,
    `score endpoint, stories260K, ${item.ids.length} tokens per text, ${cpus().length} CPUs, batch maxSize ${MAX_BATCH}, onnxruntime threads ${THREADS}`,
    'texts',
    LEVELS,
  );
} finally {
  await loaded.model.dispose();
}
