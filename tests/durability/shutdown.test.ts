import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, killAll, startRecordingWorker, startServe } from './cluster.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-shutdown-'));
afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe('berth serve SIGTERM', () => {
  it('503 for new requests, in-flight /runsync finishes, the database is closed, the next start finds nothing stuck', {
    timeout: 60_000,
  }, async () => {
    const dataDir = join(dir, 'data');
    const serve = await startServe(0, dataDir);
    const port = serve.port;
    const base = `http://127.0.0.1:${port}`;
    startRecordingWorker(base, 'rec-w1', join(dir, 'exec.log'));
    const deadline = Date.now() + 15_000;
    while (((await api(base, 'GET', '/v2/rec/health')).json['workers'] as Record<string, number>)['idle'] !== 1) {
      if (Date.now() > deadline) throw new Error('worker did not connect');
      await new Promise((r) => setTimeout(r, 50));
    }
    const queued = await api(base, 'POST', '/v2/rec/run', { input: { n: 0 } }); // done before the signal
    const inflight = api(base, 'POST', '/v2/rec/runsync', { input: { n: 1, ms: 1_500 } });
    await new Promise((r) => setTimeout(r, 300));
    serve.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const refused = await api(base, 'POST', '/v2/rec/run', { input: { n: 2 } });
    expect(refused.status).toBe(503);
    expect(refused.json['code']).toBe('unavailable');
    const sync = await inflight;
    expect(sync.status).toBe(200);
    expect(sync.json['status']).toBe('COMPLETED');
    expect(await serve.exited()).toBe(0);

    const again = await startServe(port, dataDir);
    try {
      expect(again.text).toMatch(/Data: .*berth\.sqlite \(SQLite, durability normal\)\n/); // nothing to recover
      expect((await api(base, 'GET', `/v2/rec/status/${String(sync.json['id'])}`)).json['status']).toBe('COMPLETED');
      expect((await api(base, 'GET', `/v2/rec/status/${String(queued.json['id'])}`)).json['status']).toBe('COMPLETED');
    } finally {
      await again.kill('SIGTERM');
    }
  });
});
