// Figures for `berth dev` behaving like a serverless endpoint, on a handler that answers at once:
//   1. cold start: delayTime of a job sent to an endpoint scaled to zero (median of N), against
//      the warm delayTime of the jobs right after it (median of 20): the ratio is what scale-to-zero costs;
//   2. hot reload: time from saving a file the handler imports to the new worker connected (median of N).
//
// Run after `npm run build` at the repository root:
//   node --import tsx packages/cli/scripts/bench-dev.ts [--runs 3]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { HealthReply } from '@berth/protocol';
import { pollUntil, REPO_ROOT, startBerthDev } from '../../../tests/e2e/harness.test-helpers.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const dir = mkdtempSync(join(REPO_ROOT, '.berth', 'bench-dev-'));
try {
  writeFileSync(join(dir, 'version.ts'), 'export const V = 0;\n');
  writeFileSync(
    join(dir, 'echo.ts'),
    `import { start } from '@berth/worker';\nimport { V } from './version.js';\nstart({ handler: (job) => ({ v: V, input: job.input }) });\n`,
  );
  writeFileSync(
    join(dir, 'berth.config.json'),
    JSON.stringify({ endpoints: { echo: { worker: './echo.ts', maxWorkers: 1, idleTimeoutMs: 300 } } }),
  );
  await using berth = await startBerthDev({ config: join(dir, 'berth.config.json'), args: ['--store', 'memory'] });
  const idle = () =>
    pollUntil(
      () => berth.json<HealthReply>('/v2/echo/health'),
      (r) => r.body.workers.idle + r.body.workers.running + r.body.workers.initializing === 0,
      20_000,
    );

  // 1. Cold against warm.
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < runs; i++) {
    await idle();
    cold.push((await berth.post('/v2/echo/runsync', { input: { i } })).body.delayTime);
    for (let j = 0; j < 20; j++) warm.push((await berth.post('/v2/echo/runsync', { input: { j } })).body.delayTime);
  }
  console.log(`cold start delayTime (scaled to zero): median ${median(cold)} ms  (runs: ${cold.join(', ')} ms)`);
  console.log(`warm delayTime (worker idle):         median ${median(warm)} ms  (${warm.length} jobs)`);
  console.log(`cold / warm:                          ${(median(cold) / Math.max(1, median(warm))).toFixed(0)}x`);

  // 2. Hot reload with one worker kept running.
  const reload: number[] = [];
  for (let i = 1; i <= runs; i++) {
    await berth.post('/v2/echo/runsync', { input: {} });
    const saved = Date.now();
    writeFileSync(join(dir, 'version.ts'), `export const V = ${i};\n`);
    const r = await pollUntil(
      () => berth.post('/v2/echo/runsync', { input: {} }),
      (x) => x.body?.output?.v === i,
      20_000,
      20,
    );
    if (r.body.status !== 'COMPLETED') throw new Error(`reload ${i}: ${JSON.stringify(r.body)}`);
    const line = berth.lines.find((l) => l.at >= saved && /worker connected workerId=echo-1/.test(l.text));
    reload.push((line?.at ?? Date.now()) - saved);
  }
  console.log(`hot reload, save -> new worker connected: median ${median(reload)} ms  (runs: ${reload.join(', ')} ms)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
