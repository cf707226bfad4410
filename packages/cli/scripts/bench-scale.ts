// `berth serve --scale docker` figures on the local dockerd, with examples/basic's sleep image:
//   a. cold start (container create -> first job assigned / done, from berth_worker_cold_start_seconds), p50 and
//      p95 over N starts from zero;
//   b. a burst of 200 `sleep 500 ms` jobs from zero (minWorkers 0, maxWorkers 4) against 4 pre-started workers
//      (the ideal), same run, with the container count over time;
//   c. back to zero: last job done -> no container left (idleTimeoutMs 1000);
//   d. at least 10 scale-downs while a long job runs and short ones keep arriving (idleTimeoutMs 300).
// Jobs lost or run twice: every job must be COMPLETED and the endpoint's `retried` counter stay 0.
//
// Needs a docker daemon (DOCKER_HOST or /var/run/docker.sock) and the base image stand-in (see
// ../shared/container/README.md). Run after `npm run build` at the repository root:
//   node --import tsx packages/cli/scripts/bench-scale.ts [--starts 20] [--jobs 200]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  api,
  freePort,
  killAll,
  startServe,
  type ServeProcess,
} from '../../../tests/durability/cluster.test-helpers.js';
import { buildBasicImage, startDocker } from '../../../tests/e2e/docker.test-helpers.js';
import { REPO_ROOT } from '../../../tests/e2e/harness.test-helpers.js';

const { values } = parseArgs({
  options: {
    starts: { type: 'string', default: '20' },
    jobs: { type: 'string', default: '200' },
    /** `d` alone: only the scale-downs with jobs in flight. */
    only: { type: 'string' },
  },
});
const STARTS = Number(values.starts);
const JOBS = Number(values.jobs);
const IMAGE = 'berth-bench/sleep';
const NAME = `bench${process.pid}`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const dir = mkdtempSync(join(REPO_ROOT, '.berth', 'bench-scale-'));
const docker = await startDocker();
// berth serve (a child process) reaches the daemon started here: its socket is not the default one.
if (docker.env['DOCKER_HOST']) process.env['DOCKER_HOST'] = docker.env['DOCKER_HOST'];
const containers = (ep: string) => {
  const out = docker.run([
    'ps',
    '-aq',
    '--filter',
    `label=berth.control-plane=${NAME}`,
    '--filter',
    `label=berth.endpoint=${ep}`,
  ]);
  return out ? out.split('\n').length : 0;
};

function removeContainers(): void {
  const ids = docker.run(['ps', '-aq', '--filter', `label=berth.control-plane=${NAME}`]);
  for (const id of ids ? ids.split('\n') : []) docker.run(['rm', '-f', id]);
}

async function serveWith(endpoints: Record<string, object>): Promise<{ serve: ServeProcess; base: string }> {
  const cfg = join(dir, `berth-${Object.keys(endpoints).join('-')}.config.json`);
  writeFileSync(cfg, JSON.stringify({ endpoints }));
  const port = await freePort();
  const args = ['--store', 'memory', '--config', cfg, '--scale', 'docker', '--scale-name', NAME, '--log-level', 'info'];
  return { serve: await startServe(port, join(dir, `data-${port}`), args), base: `http://127.0.0.1:${port}` };
}

async function until(what: string, ms: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(100);
  }
}

async function coldStartSums(base: string): Promise<Record<string, number>> {
  const text = await (
    await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer berth_durability_key' } })
  ).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/berth_worker_cold_start_seconds_sum\{endpoint="sleep",until="(\w+)"\} ([\d.]+)/g))
    out[m[1]!] = Number(m[2]);
  return out;
}

type Jobs = { completed: number; retried: number };
type Workers = Record<string, number>;
const health = async (base: string, ep: string) =>
  (await api(base, 'GET', `/v2/${ep}/health`)).json as { jobs: Jobs; workers: Workers };

/**
 * Submits `n` sleep jobs; resolves with the time until all completed, and the workers /health counts every
 * 500 ms (initializing + idle + running + throttled: a blocking `docker ps` would slow the client down).
 */
async function burst(base: string, ep: string, n: number, ms: number) {
  const before = (await health(base, ep)).jobs;
  const t0 = performance.now();
  const samples: [number, number][] = [];
  const sampler = setInterval(() => {
    void health(base, ep).then(({ workers: w }) =>
      samples.push([Math.round(performance.now() - t0), w.initializing! + w.idle! + w.running! + w.throttled!]),
    );
  }, 500);
  const ids = await Promise.all(
    Array.from(
      { length: n },
      async () => (await api(base, 'POST', `/v2/${ep}/run`, { input: { ms } })).json['id'] as string,
    ),
  );
  const submittedMs = performance.now() - t0;
  await until(`${n} jobs done`, 600_000, async () => (await health(base, ep)).jobs.completed >= before.completed + n);
  clearInterval(sampler);
  const drainMs = performance.now() - t0;
  const done = await Promise.all(
    ids.map(async (id) => (await api(base, 'GET', `/v2/${ep}/status/${id}`)).json['status']),
  );
  const after = (await health(base, ep)).jobs;
  const completed = done.filter((s) => s === 'COMPLETED').length;
  return { drainMs, submittedMs, completed, retried: after.retried - before.retried, samples };
}

try {
  buildBasicImage(docker, 'sleep', IMAGE, dir);
  const cold = {
    worker: './sleep.ts',
    minWorkers: 0,
    maxWorkers: 4,
    idleTimeoutMs: 1000,
    concurrency: 1,
    image: IMAGE,
    docker: { network: 'host' },
  };
  console.log(`load before: ${load()}; docker storage driver ${docker.storageDriver}`);

  if (values.only !== 'd') await coldStartsAndBurst(cold);
  // The pre-started run's containers outlive its berth serve (they would be adopted, pointing at its old port).
  removeContainers();
  await scaleDownsInFlight(cold);
  console.log(`load after: ${load()}`);
} finally {
  await killAll();
  removeContainers();
  await docker.stop();
  rmSync(dir, { recursive: true, force: true });
}

async function coldStartsAndBurst(cold: object): Promise<void> {
  // a. cold starts from zero, one at a time.
  const a = await serveWith({ sleep: cold });
  const assigned: number[] = [];
  const done: number[] = [];
  const clientMs: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    await until('zero containers', 120_000, () => containers('sleep') === 0);
    const before = await coldStartSums(a.base);
    const t0 = performance.now();
    const r = await api(a.base, 'POST', '/v2/sleep/runsync?wait=120000', { input: { ms: 0 } });
    if (r.json['status'] !== 'COMPLETED') throw new Error(`cold start ${i}: ${JSON.stringify(r.json)}`);
    clientMs.push(performance.now() - t0);
    await until(
      'the cold start in /metrics',
      10_000,
      async () => ((await coldStartSums(a.base))['first_job_done'] ?? 0) > (before['first_job_done'] ?? 0),
    );
    const after = await coldStartSums(a.base);
    assigned.push((after['first_job_assigned']! - (before['first_job_assigned'] ?? 0)) * 1000);
    done.push((after['first_job_done']! - (before['first_job_done'] ?? 0)) * 1000);
  }
  const f = (xs: number[]) => `p50 ${(pct(xs, 50) / 1000).toFixed(2)} s, p95 ${(pct(xs, 95) / 1000).toFixed(2)} s`;
  console.log(`a. cold start over ${STARTS} starts (load ${load()}):`);
  console.log(`   container create -> first job assigned: ${f(assigned)}`);
  console.log(`   container create -> first job done:     ${f(done)}`);
  console.log(`   client: /runsync to an endpoint at zero: ${f(clientMs)}`);
  // The scaler's "cold start of <worker>: <total> ms (scaler a ms, create b ms, ...)" lines: p50/p95 per part.
  const parts = new Map<string, number[]>();
  for (const m of a.serve.text.matchAll(/cold start of \S+: \d+ ms \(([^)]*)\)/g))
    for (const [, k, v] of m[1]!.matchAll(/(\w+) (\d+) ms/g)) parts.set(k!, [...(parts.get(k!) ?? []), Number(v)]);
  console.log(
    `   parts (ms, p50/p95): ${[...parts].map(([k, xs]) => `${k} ${Math.round(pct(xs, 50))}/${Math.round(pct(xs, 95))}`).join(', ')}`,
  );

  // b. + c. the burst from zero, then back to zero.
  await until('zero containers', 120_000, () => containers('sleep') === 0);
  const fromZero = await burst(a.base, 'sleep', JOBS, 500);
  const lastDone = performance.now();
  await until('back to zero', 120_000, () => containers('sleep') === 0);
  const toZeroMs = performance.now() - lastDone;
  const scaleDowns = a.serve.text.split('\n').filter((l) => /scaling sleep down/.test(l)).length;
  await a.serve.kill('SIGTERM');

  // b. the ideal: 4 workers started and connected before the burst.
  const w = await serveWith({ sleep: { ...cold, minWorkers: 4 } });
  await until(
    '4 warm workers',
    180_000,
    async () => ((await api(w.base, 'GET', '/v2/sleep/health')).json['workers'] as { idle: number }).idle === 4,
  );
  const warm = await burst(w.base, 'sleep', JOBS, 500);
  await w.serve.kill('SIGTERM');

  console.log(`b. burst of ${JOBS} sleep-500ms jobs (load ${load()}):`);
  console.log(
    `   from zero (0..4 workers): ${(fromZero.drainMs / 1000).toFixed(1)} s; 4 pre-started: ${(warm.drainMs / 1000).toFixed(1)} s; ratio ${(fromZero.drainMs / warm.drainMs).toFixed(2)}`,
  );
  console.log(
    `   (submitting the ${JOBS} jobs took ${(fromZero.submittedMs / 1000).toFixed(1)} s and ${(warm.submittedMs / 1000).toFixed(1)} s)`,
  );
  console.log(`   workers over time from zero (ms:count): ${fromZero.samples.map(([t, n]) => `${t}:${n}`).join(' ')}`);
  console.log(
    `   completed ${fromZero.completed}/${JOBS} and ${warm.completed}/${JOBS}; retried ${fromZero.retried} and ${warm.retried}`,
  );
  console.log(
    `c. back to zero: ${(toZeroMs / 1000).toFixed(1)} s after the last job (idleTimeoutMs 1000); scale-downs in run a+b: ${scaleDowns}`,
  );
}

async function scaleDownsInFlight(cold: object): Promise<void> {
  // d. scale-downs with jobs in flight: one long job keeps running while waves of short jobs bring workers up and
  // idle ones are stopped (idleTimeoutMs 300) as the next wave arrives; every job must be done exactly once.
  const d = await serveWith({ sleep: { ...cold, idleTimeoutMs: 300 } });
  const downs = () => d.serve.text.split('\n').filter((l) => /scaling sleep down/.test(l)).length;
  const before = (await health(d.base, 'sleep')).jobs;
  const ids = [(await api(d.base, 'POST', '/v2/sleep/run', { input: { ms: 60_000 } })).json['id'] as string];
  let inFlightDowns = 0;
  const t0 = performance.now();
  while (inFlightDowns < 10 && performance.now() - t0 < 180_000) {
    const was = downs();
    for (let i = 0; i < 3; i++)
      ids.push((await api(d.base, 'POST', '/v2/sleep/run', { input: { ms: 200 } })).json['id'] as string);
    await sleep(1500);
    inFlightDowns += downs() - was; // the 60 s job runs throughout: each of these stops happened with it in flight
  }
  await api(d.base, 'POST', `/v2/sleep/cancel/${ids[0]}`);
  const statusesNow = () =>
    Promise.all(ids.slice(1).map(async (id) => (await api(d.base, 'GET', `/v2/sleep/status/${id}`)).json['status']));
  try {
    await until('the waves done', 60_000, async () =>
      (await statusesNow()).every((x) => x === 'COMPLETED' || x === 'FAILED'),
    );
  } catch (err) {
    console.log(`d. ${String(err)}: ${JSON.stringify(await statusesNow())}\n${d.serve.text.slice(-5000)}`);
    throw err;
  }
  const statuses = await statusesNow();
  const dJobs = (await health(d.base, 'sleep')).jobs;
  await d.serve.kill('SIGTERM');
  console.log(
    `d. ${inFlightDowns} scale-downs with a job in flight (idleTimeoutMs 300): ${statuses.filter((x) => x === 'COMPLETED').length}/${statuses.length} short jobs COMPLETED, retried ${dJobs.retried - before.retried}`,
  );
}
