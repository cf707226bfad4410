import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pollUntil, startBerthDev } from '../e2e/harness.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-dev-recovery-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('berth dev on SQLite', () => {
  it('shows where the data lives; after a kill -9 of berth dev and its workers, the next start recovers every job', {
    timeout: 90_000,
  }, async () => {
    const dataDir = join(dir, 'data');
    const ids: string[] = [];
    {
      const berth = await startBerthDev({ args: ['--data-dir', dataDir], waitForWorkers: ['sleep'] });
      expect(berth.output).toContain(`Data: ${join(dataDir, 'berth.sqlite')} (SQLite, durability normal)`);
      for (let i = 0; i < 4; i++) {
        const r = await berth.fetch('/v2/sleep/run', { method: 'POST', body: JSON.stringify({ input: { ms: 1500 } }) });
        ids.push(String(((await r.json()) as { id: string }).id));
      }
      // sleep runs 2 at a time: 2 running, 2 queued
      await pollUntil(
        async () => (await (await berth.fetch('/v2/sleep/health')).json()) as { jobs: { inProgress: number } },
        (h) => h.jobs.inProgress === 2,
        10_000,
      );
      // kill -9 of berth dev and its workers together (the whole process group), as a crash of the machine would
      process.kill(-(berth.child.pid ?? 0), 'SIGKILL');
      await berth.exited(10_000);
    }

    await using again = await startBerthDev({ args: ['--data-dir', dataDir], waitForWorkers: ['sleep'] });
    const line = await again.waitForLine(/^Data: .*$/m, 10_000).catch(() => null);
    expect(line?.[0] ?? again.tail()).toMatch(/recovered 2 queued and 2 running jobs$/);
    const done = [];
    for (const id of ids) {
      const job = await pollUntil(
        async () =>
          (await (await again.fetch(`/v2/sleep/status/${id}`)).json()) as { status: string; retries?: number },
        (j) => j.status === 'COMPLETED',
        30_000,
      );
      done.push(job);
    }
    expect(done.map((j) => j.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED']);
    // the two that were running when everything died ran again (the restarted workers came back without them)
    expect(done.filter((j) => j.retries === 1).length).toBe(2);
  });
});
