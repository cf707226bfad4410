// Per-job overhead of RunPod's worker (pull) protocol against Berth's WebSocket protocol, in one run: jobs/s of
// a no-op handler through one control plane (memory store), for
//   1. a Berth worker over the WebSocket,
//   2. the same Berth worker in RunPod mode (pull protocol),
//   3. the unmodified runpod-python worker (when ../shared/vendor/runpod-python is there).
// Each worker runs `--concurrency` jobs at once. The jobs are queued first, then the worker starts; the clock runs
// from the moment it is registered to the last completion (so neither submitting nor process start counts).
//
// Run after `npm run build` at the repository root:
//   node --import tsx packages/cli/scripts/bench-pull.ts [--jobs 400] [--py-jobs 100] [--concurrency 4]
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createServer } from '@berth/server';
import { PyWorker, runpodEnv, runpodSkipReason } from '../../../tests/python/runpod-python.test-helpers.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '400' },
    'py-jobs': { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '4' },
  },
});
const JOBS = Number(values.jobs);
const PY_JOBS = Number(values['py-jobs']);
const C = values.concurrency!;
const HANDLER = fileURLToPath(new URL('../../../tests/e2e/fixtures/runpod-handler.ts', import.meta.url));
const KEY = 'bench-key';
const TOKEN = 'bench-token';
const noop = () => {};

const server = createServer({
  apiKeys: [KEY],
  workerTokens: [TOKEN],
  endpoints: ['ws', 'pull', 'py'],
  logger: { debug: noop, info: noop, warn: noop, error: noop },
});
const { url } = await server.listen({ port: 0 });
const node = [process.execPath, '--import', 'tsx', HANDLER];

async function measure(ep: string, n: number, spawnWorker: () => PyWorker): Promise<number> {
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, () =>
        fetch(`${url}/v2/${ep}/run`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}` },
          body: '{"input":{}}',
        }).then((r) => r.arrayBuffer()),
      ),
    );
  }
  const worker = spawnWorker();
  try {
    const up = performance.now() + 60_000;
    while (server.workers.connected(ep).length === 0) {
      if (performance.now() > up) throw new Error(`${ep} worker did not connect:\n${worker.output.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const t0 = performance.now();
    while ((await server.health(ep)).jobs.completed < n) await new Promise((r) => setTimeout(r, 10));
    return n / ((performance.now() - t0) / 1000);
  } finally {
    await worker.stop();
  }
}

const results: Record<string, number> = {};
results['websocket (Berth worker)'] = await measure(
  'ws',
  JOBS,
  () =>
    new PyWorker(
      {
        BERTH_URL: url,
        BERTH_ENDPOINT_ID: 'ws',
        BERTH_WORKER_TOKEN: TOKEN,
        BERTH_WORKER_ID: 'ws-1',
        BERTH_TEST_HANDLER: 'noop',
        BERTH_CONCURRENCY: C,
        BERTH_LOG_LEVEL: 'warn',
      },
      HANDLER,
      node,
    ),
);
results['pull (Berth worker, RunPod mode)'] = await measure(
  'pull',
  JOBS,
  () =>
    new PyWorker(
      {
        ...runpodEnv(url, 'pull', 'pull-1', TOKEN),
        BERTH_TEST_HANDLER: 'noop',
        BERTH_CONCURRENCY: C,
        BERTH_LOG_LEVEL: 'warn',
      },
      HANDLER,
      node,
    ),
);
const skip = runpodSkipReason();
if (skip) console.log(`runpod-python skipped: ${skip}`);
else
  results['pull (runpod-python 1.12)'] = await measure(
    'py',
    PY_JOBS,
    () =>
      new PyWorker({
        ...runpodEnv(url, 'py', 'py-1', TOKEN),
        BERTH_TEST_HANDLER: 'noop',
        BERTH_TEST_CONCURRENCY: C,
        RUNPOD_DEBUG_LEVEL: 'ERROR',
      }),
  );
await server.close({ drainMs: 100 });

const base = results['websocket (Berth worker)']!;
console.log(
  `no-op jobs/s, concurrency ${C} per worker, ${JOBS} jobs (${PY_JOBS} for runpod-python); load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const [name, rate] of Object.entries(results))
  console.log(
    `  ${name.padEnd(34)} ${rate.toFixed(1).padStart(8)} jobs/s   ${(rate / base).toFixed(2)}x websocket   ${(1000 / rate).toFixed(2)} ms/job`,
  );
