// The graphile-worker peer's front: graphile-worker 0.17's WorkerUtils (addJob) in schema PG_SCHEMA, behind the
// routes of ./front-http.ts. graphile-worker keeps no output and has no completion event: the task writes the
// output to a result table and NOTIFYs `<schema>_done` with `<key> <output>` in the same statement (./gw-worker.ts).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { makeWorkerUtils } from 'graphile-worker';
import { listenDone } from './done-listener.js';
import { serveFront } from './front-http.js';
import { connectionString, DONE_CHANNEL, logger, RESULTS, schema, TASK } from './gw-common.js';

const utils = await makeWorkerUtils({ connectionString, schema, logger });
await utils.migrate();
const db = new pg.Pool({ connectionString, max: 4 });
await db.query(`CREATE TABLE ${RESULTS} (id bigint PRIMARY KEY, output jsonb NOT NULL)`);
const listen = new pg.Client({ connectionString });
await listen.connect();
const done = await listenDone(listen, DONE_CHANNEL);

serveFront({
  submit: async (input) => (await utils.addJob(TASK, { input })).id,
  runsync: async (input) => {
    const key = randomUUID();
    const output = done.wait(key);
    const job = await utils.addJob(TASK, { input, key });
    return { id: job.id, output: await output };
  },
  status: async (id) => {
    if (!/^\d+$/.test(id)) return undefined;
    const out = await db.query<{ output: unknown }>(`SELECT output FROM ${RESULTS} WHERE id = $1`, [id]);
    if (out.rows[0]) return { status: 'COMPLETED', output: out.rows[0].output };
    const job = await db.query<{ locked: boolean }>(
      `SELECT locked_at IS NOT NULL AS locked FROM "${schema}"._private_jobs WHERE id = $1`,
      [id],
    );
    return job.rows[0] ? { status: job.rows[0].locked ? 'IN_PROGRESS' : 'IN_QUEUE' } : undefined;
  },
  counts: async () => ({ completed: done.count(), inQueue: NaN }),
});
