import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startRecordingWorker, startServe } from './cluster.test-helpers.js';
import { classify, PG_TEST_URL, roundRobinProxy, startReplicas, replicaFixture } from './replicas.test-helpers.js';

// A rolling restart: under load, a third replica joins, then one of the first two is stopped with SIGTERM (drain,
// then exit). Its workers finish their jobs, reconnect through the balancer to the others and keep working.
const JOBS = 250;
const { skip, dir, schema } = await replicaFixture('rolling');

describe.skipIf(skip !== undefined)(
  `a rolling restart of replicas on PostgreSQL${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    it('a replica joins and another leaves with SIGTERM under load: every acknowledged job completes exactly once', {
      timeout: 60_000,
    }, async () => {
      const pgArgs = [
        '--store',
        'postgres',
        '--database-url',
        PG_TEST_URL,
        '--database-schema',
        schema,
        '--worker-grace-ms',
        '10000',
      ];
      const { serves, ports } = await startReplicas(2, PG_TEST_URL, schema, dir, ['--worker-grace-ms', '10000']);
      const backends = [...ports];
      const lb = await roundRobinProxy(backends);
      const execLog = join(dir, 'executions.log');
      for (let i = 0; i < 3; i++) startRecordingWorker(lb.url, `rec-w${i}`, execLog);
      const live = [...ports.map((p) => `http://127.0.0.1:${p}`)];

      const acked: string[] = [];
      let submitted = 0;
      let refused = 0;
      let rolled = false;
      const client = async (c: number) => {
        let k = c;
        while ((acked.length < JOBS || !rolled) && submitted < JOBS * 10) {
          const n = submitted++;
          try {
            const r = await api(live[k++ % live.length]!, 'POST', '/v2/rec/run', {
              input: { n, ms: 30 + (n % 7) * 20 },
            });
            if (r.status === 200 && typeof r.json['id'] === 'string') acked.push(r.json['id']);
            else refused++; // 503 from the draining replica
          } catch {
            refused++;
          }
        }
      };
      const roll = (async () => {
        while (acked.length < JOBS * 0.3) await new Promise((r) => setTimeout(r, 20));
        const joined = await startServe(0, join(dir, 'r2'), pgArgs);
        const port = joined.port;
        backends.push(port); // the balancer sends new connections there too
        live.push(`http://127.0.0.1:${port}`);
        serves.push(joined);
        live.splice(live.indexOf(`http://127.0.0.1:${ports[0]}`), 1);
        backends.splice(backends.indexOf(ports[0]!), 1);
        const code = await serves[0]!.kill('SIGTERM');
        rolled = true;
        return code;
      })();
      await Promise.all(Array.from({ length: 4 }, (_, c) => client(c)));
      const exitCode = await roll;
      expect(acked.length).toBeGreaterThanOrEqual(JOBS);
      const report = { submitted, refused, ...(await classify(() => live, acked, execLog, 30_000)) };
      console.log(`rolling restart checker: ${JSON.stringify(report)}`);
      expect(exitCode).toBe(0); // drained and exited cleanly
      expect(report.lost).toBe(0);
      expect(report.stillPending).toBe(0);
      expect(report.completed).toBe(report.acknowledged);
      expect(report.duplicated).toBe(0);
      await lb.close();
    });
  },
);
