import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_KEY, WORKER_TOKEN, api, executions, startRecordingWorker } from './cluster.test-helpers.js';
import { cuttingProxy } from './cutting-proxy.test-helpers.js';
import { PG_TEST_URL, startReplicas, replicaFixture } from './replicas.test-helpers.js';

// Issue #17's replica test: 3 real `berth serve --store postgres` processes, workers on two different replicas.
// Every replica gives the same /health and /metrics; an output file stored through one is served by all; clients
// retrying /run and /runsync with an Idempotency-Key through a balancer that cuts connections mid-request make
// exactly one job per key. (Replica SIGKILL: replicas-kill9.test.ts.)
const KEYS = Number(process.env['BERTH_ONE_VIEW_KEYS'] ?? 40);
const { skip, dir, schema } = await replicaFixture('one-view');

const auth = { authorization: `Bearer ${API_KEY}` };
const until = async <T>(fn: () => Promise<T | undefined>, ms: number, what: string): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe.skipIf(skip !== undefined)(`3 replicas behave like one server${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('agree on /health and /metrics, serve every output URL, and make one job per Idempotency-Key through a cutting balancer', {
    timeout: 90_000,
  }, async () => {
    const { ports } = await startReplicas(3, PG_TEST_URL, schema, dir);
    const bases = ports.map((p) => `http://127.0.0.1:${p}`);
    const execLog = join(dir, 'executions.log');
    startRecordingWorker(bases[0]!, 'w-on-0', execLog);
    startRecordingWorker(bases[2]!, 'w-on-2', execLog);

    // One view: every replica counts both workers, and the answers are identical.
    const healths = async () =>
      Promise.all(bases.map(async (b) => JSON.stringify((await api(b, 'GET', '/v2/rec/health')).json['workers'])));
    const agreed = await until(
      async () => {
        const h = await healths();
        return h.every((x) => x === h[0]) && (JSON.parse(h[0]!) as { idle: number }).idle === 2 ? h[0] : undefined;
      },
      15_000,
      'every replica to report both workers idle',
    );
    expect(JSON.parse(agreed)).toMatchObject({ idle: 2, running: 0 });
    const gauges = async () =>
      Promise.all(
        bases.map(async (b) =>
          (await (await fetch(`${b}/metrics`, { headers: auth })).text())
            .split('\n')
            .filter((l) => l.startsWith('berth_workers{endpoint="rec"'))
            .join('\n'),
        ),
      );
    const g = await gauges();
    expect(g[0]).toContain('berth_workers{endpoint="rec",state="idle"} 2');
    expect(new Set(g).size).toBe(1);

    // Output files: stored through replica 1 (which has no worker) for a job running on replica 0 or 2.
    const run = await api(bases[1]!, 'POST', '/v2/rec/run', { input: { n: 0, ms: 3_000 } });
    const jobId = run.json['id'] as string;
    await until(
      async () =>
        (await api(bases[1]!, 'GET', `/v2/rec/status/${jobId}`)).json['status'] === 'IN_PROGRESS' ? true : undefined,
      10_000,
      'the job to run',
    );
    // A change reaches the other replicas within a presence check (200 ms) and a notification.
    const busy = await until(
      async () => {
        const h = await healths();
        return h.every((x) => x === h[0]) && (JSON.parse(h[0]!) as { running: number }).running === 1
          ? h[0]
          : undefined;
      },
      5_000,
      'every replica to report the worker running',
    );
    expect(JSON.parse(busy)).toMatchObject({ idle: 1, running: 1 });
    const bytes = Buffer.from(Array.from({ length: 700_000 }, (_, i) => (i * 13) & 255));
    const up = await fetch(`${bases[1]}/v2/_worker/files/${jobId}?ext=png`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${WORKER_TOKEN}`, 'content-type': 'image/png' },
      body: bytes,
    });
    expect(up.status).toBe(200);
    const fileUrl = new URL(((await up.json()) as { url: string }).url);
    for (const b of bases) {
      const got = await fetch(`${b}${fileUrl.pathname}${fileUrl.search}`);
      expect(got.status, b).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    }

    // Idempotency through a balancer that cuts connections mid-request.
    const lb = await cuttingProxy(ports);
    const ids = new Map<string, Set<string>>();
    let attempts = 0;
    const submit = async (k: number) => {
      const key = randomUUID();
      const route = k % 2 ? 'runsync?wait=20000' : 'run';
      const seen = new Set<string>();
      ids.set(key, seen);
      for (let tries = 0; tries < 30; tries++) {
        attempts++;
        try {
          const res = await fetch(`${lb.url}/v2/rec/${route}`, {
            method: 'POST',
            headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': key },
            body: JSON.stringify({ input: { n: k, ms: 20 } }),
            signal: AbortSignal.timeout(25_000),
          });
          const body = (await res.json()) as { id?: string };
          if (res.status === 200 && body.id) {
            seen.add(body.id);
            return;
          }
        } catch {
          // cut: retry with the same key
        }
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`key ${key}: no answer in 30 tries`);
    };
    for (let k = 0; k < KEYS; k += 8)
      await Promise.all(Array.from({ length: Math.min(8, KEYS - k) }, (_, i) => submit(k + i)));
    await lb.close();
    expect(lb.cuts()).toBeGreaterThan(KEYS / 3);
    for (const seen of ids.values()) expect(seen.size).toBe(1);
    const jobIds = [...ids.values()].map((s) => [...s][0]!);
    await until(
      async () => {
        // The keyed jobs, and the 3 s job of the file check (on an idle machine the keyed ones finish first).
        const done = await Promise.all(
          [...jobIds, jobId].map(async (id) => (await api(bases[0]!, 'GET', `/v2/rec/status/${id}`)).json['status']),
        );
        return done.every((s) => s === 'COMPLETED') ? true : undefined;
      },
      30_000,
      'every job to complete',
    );
    const runs = executions(execLog);
    for (const id of jobIds) expect(runs.get(id), id).toBe(1);
    const keyed = new Set(jobIds);
    const extra = [...runs.keys()].filter((id) => id !== jobId && !keyed.has(id));
    expect(extra).toEqual([]); // no job was made by a cut attempt besides its key's one
    const jobs = (await api(bases[2]!, 'GET', '/v2/rec/health')).json['jobs'] as { completed: number };
    expect(jobs.completed).toBe(KEYS + 1);
    process.stdout.write(`one-view: ${KEYS} keys, ${attempts} attempts, ${lb.cuts()} connections cut, ${KEYS} jobs\n`);
  });
});
