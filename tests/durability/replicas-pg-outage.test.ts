import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { random } from '../../packages/server/src/store/conformance/fixtures.test-helpers.js';
import { api, startRecordingWorker } from './cluster.test-helpers.js';
import {
  classify,
  PG_TEST_URL,
  roundRobinProxy,
  startReplicas,
  terminateBerthConnections,
  replicaFixture,
} from './replicas.test-helpers.js';

// The database drops every Berth connection (pg_terminate_backend, as in a failover) several times under load.
// Requests caught in it answer 503 `unavailable` (never a crash or a hang); the pools and the LISTEN channels
// reconnect by themselves; workers whose messages failed reconnect and resend; every acknowledged job completes.
const JOBS = Number(process.env['BERTH_OUTAGE_JOBS'] ?? 300);
const CUTS = 4;
const CLIENTS = 6;
const { skip, dir, schema } = await replicaFixture('pg-outage');

describe.skipIf(skip !== undefined)(
  `PostgreSQL connections terminated under load${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    it(`answers 503 while cut off, recovers by itself, and completes every acknowledged job`, {
      timeout: 60_000,
    }, async () => {
      const rand = random(Number(process.env['BERTH_OUTAGE_SEED'] ?? 20261123));
      const { serves, ports } = await startReplicas(2, PG_TEST_URL, schema, dir, ['--worker-grace-ms', '10000']);
      const proxy = await roundRobinProxy(ports);
      const execLog = join(dir, 'executions.log');
      for (let i = 0; i < 3; i++) startRecordingWorker(proxy.url, `rec-w${i}`, execLog);
      const bases = ports.map((p) => `http://127.0.0.1:${p}`);

      const acked: string[] = [];
      const answers = new Map<string, number>();
      let submitted = 0;
      let cut = false;
      const client = async (c: number) => {
        let k = c;
        while ((acked.length < JOBS || !cut) && submitted < JOBS * 10) {
          const n = submitted++;
          try {
            const r = await api(bases[k++ % bases.length]!, 'POST', '/v2/rec/run', {
              input: { n, ms: Math.floor(rand() * 100) },
            });
            const key = r.status === 200 ? '200' : `${r.status} ${String(r.json['code'])}`;
            answers.set(key, (answers.get(key) ?? 0) + 1);
            if (r.status === 200 && typeof r.json['id'] === 'string') acked.push(r.json['id']);
            else await new Promise((r) => setTimeout(r, 20));
          } catch (err) {
            answers.set(`error ${String(err)}`, (answers.get(`error ${String(err)}`) ?? 0) + 1);
          }
        }
      };
      let terminated = 0;
      const cutter = (async () => {
        for (let i = 0; i < CUTS; i++) {
          await new Promise((r) => setTimeout(r, 300 + Math.floor(rand() * 400)));
          terminated += await terminateBerthConnections(PG_TEST_URL, schema);
        }
        cut = true;
      })();
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      await cutter;
      const report = {
        submitted,
        terminatedConnections: terminated,
        answers: Object.fromEntries(answers),
        ...(await classify(() => bases, acked, execLog, 30_000)),
      };
      console.log(`pg outage checker: ${JSON.stringify(report)}`);
      expect(terminated).toBeGreaterThan(0);
      for (const s of serves)
        if (s.child.exitCode !== null || s.child.signalCode !== null)
          console.log(`replica exited:\n${s.text.slice(-3000)}`);
      for (const s of serves) expect(s.child.exitCode).toBeNull(); // no crash
      for (const key of answers.keys()) expect(key).toMatch(/^(200|503 unavailable)$/); // nothing else, no cut connections
      expect(report.acknowledged).toBeGreaterThanOrEqual(JOBS);
      expect(report.lost).toBe(0);
      expect(report.stillPending).toBe(0);
      expect(report.completed).toBe(report.acknowledged);
      // After the last cut, both replicas serve and dispatch again without a restart.
      for (const base of bases) {
        const r = await api(base, 'POST', '/v2/rec/runsync', { input: { n: -1 } });
        expect(r.json['status']).toBe('COMPLETED');
      }
      await proxy.close();
    });
  },
);
