import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pollUntil, REPO_ROOT, startBerthDev } from './harness.test-helpers.js';

// Inside the repository (gitignored .berth/) so that the handlers resolve @berth/worker.
mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const tmp = mkdtempSync(join(REPO_ROOT, '.berth', 'reload-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A handler that sleeps `input.ms` and answers with its code version; `lib.ts` holds the version. */
function writeHandler(version: number): void {
  writeFileSync(join(tmp, 'lib.ts'), `export const VERSION = ${version};\n`);
}
writeFileSync(
  join(tmp, 'slow.ts'),
  `import { setTimeout as sleep } from 'node:timers/promises';
import { start } from '@berth/worker';
import { VERSION } from './lib.js';
start({ handler: async (job) => {
  await sleep(Number(job.input.ms ?? 0), undefined, { signal: job.signal });
  return { version: VERSION, pid: process.pid };
} });
`,
);

describe('berth dev hot reload', () => {
  it('a change to a file the handler imports restarts its workers; the running job is requeued and completes on the new code', async () => {
    writeHandler(1);
    const config = join(tmp, 'berth.config.json');
    writeFileSync(config, JSON.stringify({ endpoints: { slow: { worker: './slow.ts', workers: 1 } } }));
    await using berth = await startBerthDev({ config, waitForWorkers: ['slow'] });

    const before = await berth.post('/v2/slow/runsync', { input: { ms: 0 } });
    expect(before.body).toMatchObject({ status: 'COMPLETED', output: { version: 1 } });

    const { body: job } = await berth.post('/v2/slow/run', { input: { ms: 4_000 } });
    await pollUntil(
      () => berth.json(`/v2/slow/status/${job.id}`),
      (r) => r.body?.status === 'IN_PROGRESS',
      10_000,
    );
    const saved = Date.now();
    writeHandler(2);
    await berth.waitForLine(/lib\.ts changed: reloading slow \(1 worker; running jobs are requeued\)/, 10_000);
    await berth.waitForLine(/job requeued .*worker restarted without it/, 15_000);

    const done = await pollUntil(
      () => berth.json(`/v2/slow/status/${job.id}`),
      (r) => r.body?.status === 'COMPLETED',
      30_000,
    );
    expect(done.body.output.version).toBe(2);
    const reconnected = berth.lines.find((l) => l.at >= saved && /worker connected workerId=slow-1/.test(l.text));
    console.log(
      `hot reload: save -> new worker connected in ${reconnected ? reconnected.at - saved : '?'} ms; requeued job done ${Date.now() - saved} ms after the save`,
    );
    expect(done.body.output.pid).not.toBe(before.body.output.pid);
    expect(done.body.retries ?? 1).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('--watch-poll: a changed import is found by polling its stat and reloads the workers', async () => {
    writeHandler(1);
    const config = join(tmp, 'berth.config.json');
    writeFileSync(config, JSON.stringify({ endpoints: { slow: { worker: './slow.ts', workers: 1 } } }));
    await using berth = await startBerthDev({ config, args: ['--watch-poll'], waitForWorkers: ['slow'] });
    expect((await berth.post('/v2/slow/runsync', { input: { ms: 0 } })).body).toMatchObject({
      output: { version: 1 },
    });
    writeHandler(3);
    await berth.waitForLine(/lib\.ts changed: reloading slow/, 10_000);
    const after = await pollUntil(
      () => berth.post('/v2/slow/runsync', { input: { ms: 0 } }),
      (r) => r.body?.output?.version === 3,
      20_000,
    );
    expect(after.body.status).toBe('COMPLETED');
  }, 60_000);

  it('scale from zero with a handler that throws while loading: reported, berth dev stays up, the queued job runs once fixed', async () => {
    writeFileSync(join(tmp, 'gate.ts'), `throw new Error('model file missing');\n`);
    writeFileSync(
      join(tmp, 'gated.ts'),
      `import './gate.js';\nimport { start } from '@berth/worker';\nstart({ handler: (job) => ({ ok: job.input }) });\n`,
    );
    const config = join(tmp, 'gated.config.json');
    writeFileSync(config, JSON.stringify({ endpoints: { gated: { worker: './gated.ts', maxWorkers: 1 } } }));
    await using berth = await startBerthDev({ config });
    const { body: job } = await berth.post('/v2/gated/run', { input: { n: 1 } });
    await berth.waitForLine(
      /endpoint gated: handler gated\.ts failed to load \(worker gated-1 exited with code 1 before connecting; its error is above\)\. Fix it and save/,
      20_000,
    );
    expect(berth.output).toContain('model file missing');
    expect(berth.child.exitCode).toBeNull();
    expect((await berth.json(`/v2/gated/status/${job.id}`)).body.status).toBe('IN_QUEUE');

    writeFileSync(join(tmp, 'gate.ts'), `export {};\n`);
    await berth.waitForLine(/gate\.ts changed: reloading gated/, 10_000);
    const done = await pollUntil(
      () => berth.json(`/v2/gated/status/${job.id}`),
      (r) => r.body?.status === 'COMPLETED',
      20_000,
    );
    expect(done.body.output).toEqual({ ok: { n: 1 } });
  }, 60_000);

  it('a change that does not compile keeps the old workers and says where; fixing it reloads', async () => {
    writeHandler(1);
    const config = join(tmp, 'berth.config.json');
    writeFileSync(config, JSON.stringify({ endpoints: { slow: { worker: './slow.ts', workers: 1 } } }));
    await using berth = await startBerthDev({ config, waitForWorkers: ['slow'] });
    writeFileSync(join(tmp, 'lib.ts'), 'export const VERSION = ;\n');
    await berth.waitForLine(/lib\.ts changed but does not compile; its workers keep the previous code/, 10_000);
    expect(berth.output).toMatch(/lib\.ts:1:\d+: /);
    const still = await berth.post('/v2/slow/runsync', { input: { ms: 0 } });
    expect(still.body).toMatchObject({ status: 'COMPLETED', output: { version: 1 } });

    writeHandler(3);
    await berth.waitForLine(/lib\.ts changed: reloading slow/, 10_000);
    const after = await pollUntil(
      () => berth.post('/v2/slow/runsync', { input: { ms: 0 } }),
      (r) => r.body?.output?.version === 3,
      20_000,
    );
    expect(after.body.status).toBe('COMPLETED');

    // The config file is read once: a change to it is pointed out, not applied.
    writeFileSync(config, JSON.stringify({ endpoints: { slow: { worker: './slow.ts', workers: 2 } } }));
    await berth.waitForLine(/berth\.config\.json changed: restart berth dev to apply it/, 10_000);
  }, 60_000);
});
