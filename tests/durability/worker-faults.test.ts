import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createServer, silentLogger, type BerthServer } from '@berth/server';
import { SqliteStore } from '@berth/server/sqlite';
import { BlackholeProxy } from './blackhole-proxy.test-helpers.js';
import { API_KEY, WORKER_TOKEN, api, executions, killAll, startRecordingWorker } from './cluster.test-helpers.js';

// A worker that dies, freezes or loses its network mid-job: the control plane (in this process, SQLite store,
// short heartbeats so the test is quick) must hand the job to another real worker process within the documented
// bound, count the retry, and refuse the late result of the old attempt.
const HEARTBEAT_MS = 200;
const GRACE_MS = 500;
const SWEEP_MS = 100;
/** Documented bound for a silent worker: 3 missed heartbeats (+1 interval of phase) + grace + one sweep. */
const SILENT_BOUND_MS = 4 * HEARTBEAT_MS + GRACE_MS + SWEEP_MS;

const dir = mkdtempSync(join(tmpdir(), 'berth-worker-faults-'));
let server: BerthServer | undefined;
afterEach(async () => {
  await killAll();
  await server?.close({ drainMs: 0 });
  server = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function setup(name: string) {
  server = createServer({
    store: new SqliteStore({ file: join(dir, `${name}.sqlite`) }),
    apiKeys: [API_KEY],
    workerTokens: [WORKER_TOKEN],
    endpoints: ['rec'],
    heartbeatMs: HEARTBEAT_MS,
    workerGraceMs: GRACE_MS,
    sweepIntervalMs: SWEEP_MS,
    logger: silentLogger,
  });
  const { url, port } = await server.listen({ port: 0 });
  return { url, port, execLog: join(dir, `${name}.log`) };
}

async function waitFor<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what} not reached in ${timeoutMs} ms: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const status = (url: string, id: string) => api(url, 'GET', `/v2/rec/status/${id}`).then((r) => r.json);
const workers = (url: string) =>
  api(url, 'GET', '/v2/rec/health').then((r) => r.json['workers'] as Record<string, number>);

/** Starts w1 alone, gives it a job, then starts w2 as the spare. */
async function jobOnFirstWorker(url: string, execLog: string, ms: number, w1Url = url) {
  const w1 = startRecordingWorker(w1Url, 'rec-w1', execLog);
  await waitFor(
    () => workers(url),
    (w) => (w['idle'] ?? 0) + (w['running'] ?? 0) >= 1,
    15_000,
    'w1 connected',
  );
  const { json } = await api(url, 'POST', '/v2/rec/run', { input: { n: 1, ms } });
  const id = String(json['id']);
  await waitFor(
    () => status(url, id),
    (j) => j['status'] === 'IN_PROGRESS',
    5_000,
    'job running on w1',
  );
  startRecordingWorker(url, 'rec-w2', execLog);
  await waitFor(
    () => workers(url),
    (w) => (w['idle'] ?? 0) >= 1,
    15_000,
    'w2 connected',
  );
  return { id, w1 };
}

/**
 * A worker went silent at `t0` with job `id` running: the job must be requeued within the heartbeat bound (plus
 * slack for a loaded machine; without detection it would finish on the silent worker, 8 s later), then complete
 * on another worker. Returns the completed job.
 */
async function requeuedThenCompleted(url: string, id: string, t0: number, who: string, since: string) {
  await waitFor(
    () => status(url, id),
    (j) => j['status'] === 'IN_QUEUE' || (j['status'] === 'IN_PROGRESS' && j['retries'] === 1),
    10_000,
    'requeue',
  );
  const requeueMs = Date.now() - t0;
  console.log(`${who}: job requeued ${requeueMs} ms after ${since} (bound ${SILENT_BOUND_MS} ms + sweep jitter)`);
  expect(requeueMs).toBeLessThan(SILENT_BOUND_MS + 3_000);
  return waitFor(
    () => status(url, id),
    (j) => j['status'] === 'COMPLETED',
    10_000,
    'completed on another worker',
  );
}
describe('a worker lost mid-job', () => {
  it('SIGKILL: the job goes to another worker after the grace period, retries counts it', {
    timeout: 60_000,
  }, async () => {
    const { url, execLog } = await setup('sigkill');
    // Long enough that w1 is still running it when killed, even when w2 took seconds to connect on a loaded machine.
    const JOB_MS = 8_000;
    const { id, w1 } = await jobOnFirstWorker(url, execLog, JOB_MS);
    const t0 = Date.now();
    w1.child.kill('SIGKILL');
    const moved = await waitFor(
      () => status(url, id),
      (j) => j['status'] === 'COMPLETED',
      JOB_MS + 12_000,
      'job completed elsewhere',
    );
    const ms = Date.now() - t0 - JOB_MS;
    console.log(`worker SIGKILL: requeued and re-dispatched ~${ms} ms after the kill (grace ${GRACE_MS} ms)`);
    expect(moved['output']).toEqual({ n: 1, worker: 'rec-w2' });
    expect(moved['retries']).toBe(1);
    expect(executions(execLog).get(id)).toBe(2);
  });

  it('SIGSTOP (socket open, process frozen): requeued within the heartbeat bound; the late result is refused', {
    timeout: 60_000,
  }, async () => {
    const { url, execLog } = await setup('sigstop');
    const { id, w1 } = await jobOnFirstWorker(url, execLog, 8_000);
    const t0 = Date.now();
    w1.child.kill('SIGSTOP');
    const done = await requeuedThenCompleted(url, id, t0, 'worker SIGSTOP', 'the freeze');
    expect(done['output']).toEqual({ n: 1, worker: 'rec-w2' });
    // Thaw the old worker: its attempt finishes and tries to report; the control plane refuses it as stale.
    w1.child.kill('SIGCONT');
    await new Promise((r) => setTimeout(r, 2_500));
    const after = await status(url, id);
    expect(after['output']).toEqual({ n: 1, worker: 'rec-w2' });
    expect(after['retries']).toBe(1);
  });

  it('blackholed connection (half-open TCP): requeued within the heartbeat bound; the late result is refused', {
    timeout: 60_000,
  }, async () => {
    const { url, port, execLog } = await setup('blackhole');
    const proxy = await BlackholeProxy.start(port);
    try {
      const { id } = await jobOnFirstWorker(url, execLog, 8_000, `http://127.0.0.1:${proxy.port}`);
      const t0 = Date.now();
      expect(proxy.blackhole()).toBeGreaterThanOrEqual(1);
      const done = await requeuedThenCompleted(url, id, t0, 'blackholed worker', 'the cut');
      proxy.heal(); // w1's attempt ends (8 s after it started), it reconnects and offers its old attempt: refused
      await waitFor(
        async () => executions(execLog).get(id) ?? 0,
        (n) => n >= 2,
        1_000,
        'two executions',
      );
      await new Promise((r) => setTimeout(r, Math.max(0, 8_000 - (Date.now() - t0)) + 2_000));
      const after = await status(url, id);
      expect(after['status']).toBe('COMPLETED');
      expect(after['output']).toEqual(done['output']);
      expect(after['retries']).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});
