import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { random } from '../../packages/server/src/store/conformance/fixtures.test-helpers.js';
import { api, classify, killAll, startRecordingWorker, startServe, type ServeProcess } from './cluster.test-helpers.js';

// Jepsen-style checker: clients submit jobs while the control plane is killed with SIGKILL at random moments and
// restarted on the same data dir. Every job whose /run answered 200 is then classified; none may be lost.
const JOBS = Number(process.env['BERTH_KILL9_JOBS'] ?? 400);
const KILLS = Number(process.env['BERTH_KILL9_KILLS'] ?? 4);
const CLIENTS = 8;

const dir = mkdtempSync(join(tmpdir(), 'berth-kill9-'));
afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('kill -9 of the control plane', () => {
  it(`loses none of ${JOBS} acknowledged jobs across ${KILLS} SIGKILLs and restarts`, {
    timeout: 150_000,
  }, async () => {
    const rand = random(Number(process.env['BERTH_KILL9_SEED'] ?? 20261122));
    const dataDir = join(dir, 'data');
    const execLog = join(dir, 'executions.log');
    let serve: ServeProcess = await startServe(0, dataDir, ['--worker-grace-ms', '20000']);
    const port = serve.port; // restarts bind the same port, so the workers find it again
    const base = `http://127.0.0.1:${port}`;
    startRecordingWorker(base, 'rec-w1', execLog);
    startRecordingWorker(base, 'rec-w2', execLog);

    const acked: string[] = [];
    let submitted = 0;
    let refused = 0;
    let running = true;
    // Clients keep submitting until JOBS were acknowledged and every kill has happened (bounded by attempts).
    const client = async () => {
      while ((acked.length < JOBS || running) && submitted < JOBS * 20) {
        const n = submitted++;
        try {
          // One job in 25 carries a 100 KB input (SQLite keeps those in a table of their own: big-inputs.ts), one
          // in 25 a 400 KB one, streamed to a blob file, whose output is as big (blob files: issue #35).
          const pad = n % 25 === 0 ? 100_000 : n % 25 === 12 ? 400_000 : 0;
          const input = { n, ms: Math.floor(rand() * 300), ...(pad > 0 ? { pad: 'x'.repeat(pad) } : {}) };
          const r = await api(base, 'POST', '/v2/rec/run', { input });
          if (r.status === 200 && typeof r.json['id'] === 'string') acked.push(r.json['id']);
          else refused++;
        } catch {
          refused++; // the control plane died mid-request: not acknowledged, so not counted
          await new Promise((r) => setTimeout(r, 30));
        }
      }
    };
    const recovered: string[] = [];
    const killer = async () => {
      for (let k = 0; k < KILLS; k++) {
        await new Promise((r) => setTimeout(r, 250 + Math.floor(rand() * 700)));
        await serve.kill('SIGKILL');
        serve = await startServe(port, dataDir, ['--worker-grace-ms', '20000']);
        recovered.push(/Data: .*$/m.exec(serve.text)?.[0] ?? '');
      }
    };
    const started = Date.now();
    const killing = killer().finally(() => (running = false));
    await Promise.all(Array.from({ length: CLIENTS }, client));
    await killing;
    const submitMs = Date.now() - started;

    // Every acknowledged job must reach COMPLETED (workers reconnect, in-flight jobs are re-adopted or requeued).
    const report = {
      submitted,
      refusedOrCut: refused,
      kills: recovered.length,
      submitPhaseMs: submitMs,
      ...(await classify(() => [base], acked, execLog, 90_000)),
    };
    console.log(`kill -9 checker: ${JSON.stringify(report)}\n  restarts: ${recovered.join(' | ')}`);
    expect(recovered.length).toBe(KILLS);
    expect(acked.length).toBeGreaterThanOrEqual(JOBS);
    expect(report.lost).toBe(0);
    expect(report.stillPending).toBe(0);
    expect(report.completed).toBe(acked.length);
    // No orphan blob after the restarts: no upload's temp file, and every blob file belongs to a job that exists.
    await serve.kill('SIGTERM');
    serve = await startServe(port, dataDir, ['--worker-grace-ms', '20000']);
    const files = readdirSync(join(dataDir, 'blobs'));
    expect(files.filter((f) => f.startsWith('tmp-'))).toEqual([]);
    const owners = [...new Set(files.map((f) => f.slice(0, f.lastIndexOf('~'))))];
    expect(owners.length).toBeGreaterThan(0);
    for (const id of owners) expect((await api(base, 'GET', `/v2/rec/status/${id}`)).status).toBe(200);
    await serve.kill('SIGTERM');
  });
});
