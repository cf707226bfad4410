import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { random } from '../../packages/server/src/store/conformance/fixtures.test-helpers.js';
import { api, startRecordingWorker } from './cluster.test-helpers.js';
import { classify, PG_TEST_URL, roundRobinProxy, startReplicas, replicaFixture } from './replicas.test-helpers.js';

// Jepsen-style checker for several control planes on one PostgreSQL database: 3 `berth serve` replicas, worker
// processes behind a TCP round-robin balancer, clients spreading /run over the replicas; one replica gets SIGKILL
// mid-load. Its workers reconnect through the balancer to the others and keep their jobs. Every acknowledged job
// must complete exactly once.
const JOBS = Number(process.env['BERTH_REPLICAS_JOBS'] ?? 300);
const CLIENTS = 6;
const { skip, dir, schema } = await replicaFixture('replicas');

describe.skipIf(skip !== undefined)(
  `3 replicas on PostgreSQL, one killed with SIGKILL${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    it(`loses and duplicates none of ${JOBS} acknowledged jobs`, { timeout: 60_000 }, async () => {
      const rand = random(Number(process.env['BERTH_REPLICAS_SEED'] ?? 20261122));
      const { serves, ports } = await startReplicas(3, PG_TEST_URL, schema, dir, ['--worker-grace-ms', '10000']);
      const proxy = await roundRobinProxy(ports);
      const execLog = join(dir, 'executions.log');
      for (let i = 0; i < 4; i++) startRecordingWorker(proxy.url, `rec-w${i}`, execLog); // spread over the replicas by the balancer
      const bases = ports.map((p) => `http://127.0.0.1:${p}`);
      const dead = new Set<string>();
      const live = () => bases.filter((b) => !dead.has(b));

      const acked: string[] = [];
      let submitted = 0;
      let refused = 0;
      const client = async (c: number) => {
        let k = c;
        while (acked.length < JOBS && submitted < JOBS * 5) {
          const n = submitted++;
          const base = live()[k++ % live().length]!;
          try {
            const r = await api(base, 'POST', '/v2/rec/run', { input: { n, ms: Math.floor(rand() * 150) } });
            if (r.status === 200 && typeof r.json['id'] === 'string') acked.push(r.json['id']);
            else refused++;
          } catch {
            refused++; // the replica died mid-request: not acknowledged, so not counted
          }
        }
      };
      const started = Date.now();
      const killer = (async () => {
        while (acked.length < JOBS * 0.4) await new Promise((r) => setTimeout(r, 20));
        dead.add(bases[1]!);
        await serves[1]!.kill('SIGKILL');
      })();
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      await killer;
      const submitMs = Date.now() - started;
      const report = {
        submitted,
        refusedOrCut: refused,
        submitPhaseMs: submitMs,
        ...(await classify(live, acked, execLog, 30_000)),
      };
      console.log(`replicas kill -9 checker: ${JSON.stringify(report)}`);
      expect(serves[1]!.child.signalCode).toBe('SIGKILL');
      expect(report.acknowledged).toBeGreaterThanOrEqual(JOBS);
      expect(report.lost).toBe(0);
      expect(report.stillPending).toBe(0);
      expect(report.completed).toBe(report.acknowledged);
      expect(report.duplicated).toBe(0);
      for (const s of [serves[0]!, serves[2]!]) expect(s.child.exitCode).toBeNull(); // the survivors kept serving
      await proxy.close();
    });
  },
);
