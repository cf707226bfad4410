/** What the graphile-worker peer's front and worker share: its connection, schema, result table and log level. */
import { Logger } from 'graphile-worker';

export const schema = process.env['PG_SCHEMA']!;
const url = process.env['DATABASE_URL']!;
/** The database URL with `application_name` `bench:<schema>`, by which the bench finds the backends' CPU time. */
export const connectionString = `${url}${url.includes('?') ? '&' : '?'}application_name=${encodeURIComponent(`bench:${schema}`)}`;
/** graphile-worker deletes a job once it succeeded and keeps no output: the task writes it here. */
export const RESULTS = `"${schema}".bench_result`;
export const DONE_CHANNEL = `${schema}_done`;
export const TASK = 'echo';

/** Warnings and errors only (at info graphile-worker writes a line per completed job), as Berth runs at warn. */
export const logger = new Logger(() => (level, message) => {
  if (level === 'error' || level === 'warning') process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});
