// The pg-boss peer's worker: one `work()` loop fetching up to 64 jobs at a time (pg-boss 10 has no per-worker
// concurrency; a batch is its way to run many at once), each completed with its own output (pg-boss stores a
// handler's return value only for a batch of one). It LISTENs on `<schema>_wake` (see ./boss-front.ts) and calls
// `notifyWorker()`, so a fetch follows each insert instead of the next poll.
import pg from 'pg';
import PgBoss from 'pg-boss';
import { echo, released } from '../../lib/noop.js';

const schema = process.env['PG_SCHEMA']!;
const connectionString = process.env['DATABASE_URL']!;
const app = `bench:${schema}`;
const QUEUE = 'echo';

await released();
const boss = new PgBoss({ connectionString, schema, application_name: app, supervise: false, schedule: false });
boss.on('error', (err) => process.stderr.write(`pg-boss: ${err.message}\n`));
await boss.start();
const id = await boss.work<{ input: unknown }>(QUEUE, { batchSize: 64, pollingIntervalSeconds: 0.5 }, async (jobs) => {
  await Promise.all(jobs.map((j) => boss.complete(QUEUE, j.id, echo(j.data.input) as object)));
});
const listen = new pg.Client({ connectionString, application_name: app });
await listen.connect();
listen.on('notification', () => boss.notifyWorker(id));
await listen.query(`LISTEN "${schema}_wake"`);
process.send?.('ready');
