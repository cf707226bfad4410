// The pg-boss peer's front: pg-boss 10 (its defaults: pool of 10, maintenance in this process) in schema
// PG_SCHEMA, behind the routes of ./front-http.ts. pg-boss has no completion event, so two triggers are added to
// its job table: on a job becoming `completed`, NOTIFY `<schema>_done` with `<id> <output>` (the `/runsync`
// waiters and the completion count); on an insert, NOTIFY `<schema>_wake`, which the worker turns into
// `notifyWorker()` so a new job does not wait for the next poll (pg-boss's minimum interval is 0.5 s).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { listenDone } from './done-listener.js';
import { serveFront } from './front-http.js';

const schema = process.env['PG_SCHEMA']!;
const connectionString = process.env['DATABASE_URL']!;
const app = `bench:${schema}`;
const QUEUE = 'echo';

const boss = new PgBoss({ connectionString, schema, application_name: app });
boss.on('error', (err) => process.stderr.write(`pg-boss: ${err.message}\n`));
await boss.start();
await boss.createQueue(QUEUE);

const listen = new pg.Client({ connectionString, application_name: app });
await listen.connect();
await listen.query(`
  CREATE FUNCTION "${schema}".bench_done() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN PERFORM pg_notify('${schema}_done', NEW.id::text || ' ' || coalesce(NEW.output::text, 'null')); RETURN NULL; END $$;
  CREATE TRIGGER bench_done AFTER UPDATE ON "${schema}".job FOR EACH ROW
    WHEN (NEW.state = 'completed' AND OLD.state <> 'completed') EXECUTE FUNCTION "${schema}".bench_done();
  CREATE FUNCTION "${schema}".bench_wake() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN PERFORM pg_notify('${schema}_wake', ''); RETURN NULL; END $$;
  CREATE TRIGGER bench_wake AFTER INSERT ON "${schema}".job FOR EACH STATEMENT EXECUTE FUNCTION "${schema}".bench_wake();
`);
const done = await listenDone(listen, `${schema}_done`);

// The bench polls /health every 20 ms while a fill drains, and pg-boss counts its queue with count(*) (about 15 ms
// at 100,000 queued): counted at most once a second, as Berth's /health reuses a deep queue's count, so the drain's
// CPU per job is pg-boss's work and not the bench's polling.
let sized: { at: number; size: Promise<number> } | undefined;
const queueSize = () => {
  if (!sized || performance.now() - sized.at > 1000) sized = { at: performance.now(), size: boss.getQueueSize(QUEUE) };
  return sized.size;
};

const STATE: Record<string, string> = {
  created: 'IN_QUEUE',
  retry: 'IN_QUEUE',
  active: 'IN_PROGRESS',
  completed: 'COMPLETED',
  cancelled: 'CANCELLED',
  failed: 'FAILED',
};

serveFront({
  submit: async (input) => (await boss.send(QUEUE, { input }))!,
  runsync: async (input) => {
    const id = randomUUID();
    const output = done.wait(id);
    await boss.send(QUEUE, { input }, { id });
    return { id, output: await output };
  },
  status: async (id) => {
    const job = await boss.getJobById(QUEUE, id);
    if (!job) return undefined;
    return { status: STATE[job.state] ?? job.state, ...(job.state === 'completed' ? { output: job.output } : {}) };
  },
  counts: async () => ({ completed: done.count(), inQueue: await queueSize() }),
});
