// The graphile-worker peer's worker: graphile-worker 0.17's runner, 64 concurrent jobs, with the batching its
// performance guide recommends for many short jobs (a local queue of concurrency + 1 jobs fetched and locked at
// once, completions batched: completeJobBatchDelay 0). Each job writes its output and notifies the front in one
// statement (see ./gw-front.ts); graphile-worker then deletes the job.
import { run } from 'graphile-worker';
import { echo, released } from '../../lib/noop.js';
import { connectionString, DONE_CHANNEL, logger, RESULTS, schema, TASK } from './gw-common.js';

const CONCURRENCY = 64;
await released();
await run({
  connectionString,
  schema,
  logger,
  concurrency: CONCURRENCY,
  maxPoolSize: 20,
  noHandleSignals: true,
  preset: { worker: { localQueue: { size: CONCURRENCY + 1 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } },
  taskList: {
    [TASK]: async (payload, helpers) => {
      const p = payload as { input: unknown; key?: string };
      await helpers.query(
        `WITH r AS (INSERT INTO ${RESULTS} (id, output) VALUES ($1, $2::jsonb) RETURNING 1)
         SELECT pg_notify($3, $4 || ' ' || $2) FROM r`,
        [helpers.job.id, JSON.stringify(echo(p.input)), DONE_CHANNEL, p.key ?? '-'],
      );
    },
  },
});
process.send?.('ready');
