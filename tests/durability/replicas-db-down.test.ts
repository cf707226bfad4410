import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { api, startRecordingWorker } from './cluster.test-helpers.js';
import {
  classify,
  downableProxy,
  PG_TEST_URL,
  roundRobinProxy,
  startReplicas,
  replicaFixture,
} from './replicas.test-helpers.js';

// The database goes away for 2 s under load (a restart or failover: connections reset, new ones refused), with
// 2 replicas reaching it through a TCP proxy. While it is down, requests that need it answer 503 `unavailable`;
// nothing crashes; when it is back everything resumes without a restart and every acknowledged job completes.
const JOBS = 200;
const { skip, dir, schema } = await replicaFixture('db-down');

describe.skipIf(skip !== undefined)(`the database down for 2 s under load${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('answers 503 unavailable while it is down, then recovers by itself; no acknowledged job is lost', {
    timeout: 60_000,
  }, async () => {
    const db = await downableProxy(Number(new URL(PG_TEST_URL).port || 5432));
    const url = new URL(PG_TEST_URL);
    url.port = String(db.port);
    const { serves, ports } = await startReplicas(2, url.toString(), schema, dir, ['--worker-grace-ms', '10000']);
    const lb = await roundRobinProxy(ports);
    const execLog = join(dir, 'executions.log');
    for (let i = 0; i < 2; i++) startRecordingWorker(lb.url, `rec-w${i}`, execLog);
    const bases = ports.map((p) => `http://127.0.0.1:${p}`);

    const acked: string[] = [];
    const answers = new Map<string, number>();
    let submitted = 0;
    let outageOver = false;
    const client = async (c: number) => {
      let k = c;
      while ((acked.length < JOBS || !outageOver) && submitted < JOBS * 20) {
        const n = submitted++;
        try {
          const r = await api(bases[k++ % bases.length]!, 'POST', '/v2/rec/run', { input: { n, ms: 20 } });
          const key = r.status === 200 ? '200' : `${r.status} ${String(r.json['code'])}`;
          answers.set(key, (answers.get(key) ?? 0) + 1);
          if (r.status === 200 && typeof r.json['id'] === 'string') acked.push(r.json['id']);
          else await new Promise((r) => setTimeout(r, 50));
        } catch (err) {
          answers.set(`error ${String(err)}`, (answers.get(`error ${String(err)}`) ?? 0) + 1);
        }
      }
    };
    const outage = (async () => {
      while (acked.length < JOBS / 2) await new Promise((r) => setTimeout(r, 20));
      db.down();
      await new Promise((r) => setTimeout(r, 2_000));
      db.up();
      outageOver = true;
    })();
    await Promise.all(Array.from({ length: 4 }, (_, c) => client(c)));
    await outage;
    const report = {
      submitted,
      answers: Object.fromEntries(answers),
      ...(await classify(() => bases, acked, execLog, 30_000)),
    };
    console.log(`db down checker: ${JSON.stringify(report)}`);
    for (const s of serves) expect(s.child.exitCode).toBeNull();
    expect(answers.get('503 unavailable') ?? 0).toBeGreaterThan(0);
    for (const key of answers.keys()) expect(key).toMatch(/^(200|503 unavailable)$/);
    expect(report.lost).toBe(0);
    expect(report.stillPending).toBe(0);
    expect(report.completed).toBe(report.acknowledged);
    for (const base of bases)
      expect((await api(base, 'POST', '/v2/rec/runsync', { input: { n: -1 } })).json['status']).toBe('COMPLETED');
    await lb.close();
    await db.close();
  });
});
