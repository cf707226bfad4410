// Preloaded into `berth serve` by ../postgres-statements.ts (NODE_OPTIONS=--import): counts every `pg` Client.query
// (one round trip each: a named statement's Parse/Bind/Execute/Sync go out together) by SQL text, and the
// notifications each connection receives. On SIGUSR2 it writes them to $BENCH_PG_COUNT_DIR/<pid>.json and resets.
import { createRequire } from 'node:module';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.BENCH_PG_COUNT_DIR;
const root = process.env.BENCH_PG_COUNT_ROOT;
if (dir && root) {
  const pg = createRequire(join(root, 'packages/server/package.json'))('pg');
  const counts = new Map();
  let notifications = 0;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, values, cb) {
    const text = (typeof config === 'string' ? config : (config?.text ?? '?')).replace(/\s+/g, ' ').trim();
    counts.set(text, (counts.get(text) ?? 0) + 1);
    if (!this.benchCounted) {
      this.benchCounted = true;
      this.on('notification', () => notifications++);
    }
    return query.call(this, config, values, cb);
  };
  process.on('SIGUSR2', () => {
    const file = join(dir, `${process.pid}.json`);
    writeFileSync(`${file}.tmp`, JSON.stringify({ notifications, statements: [...counts] }));
    renameSync(`${file}.tmp`, file); // whole, never half-written

    counts.clear();
    notifications = 0;
  });
}
