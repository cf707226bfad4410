import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type ServeProcess } from '../durability/cluster.test-helpers.js';
import {
  containers as listContainers,
  startScaleServe,
  stopScaleRun,
  waitFor as waitUntil,
} from './docker-scale.test-helpers.js';
import { buildBasicImage, dockerUnavailable, startDocker, type Docker } from './docker.test-helpers.js';
import { REPO_ROOT } from './harness.test-helpers.js';

/**
 * `berth serve --scale docker` against a real dockerd: examples/basic's sleep image (berth build + docker build),
 * scaled from zero on a burst and back to zero, scale-downs with jobs in flight (none lost or run twice), a
 * missing image and a container that exits at once (reported, backed off, the control plane unharmed).
 */
const skip = dockerUnavailable();
if (skip) console.log(`[docker-scale] skipped: ${skip}`);

const IMAGE = 'berth-scale-test/sleep';
mkdirSync(join(REPO_ROOT, '.berth'), { recursive: true });
const work = mkdtempSync(join(REPO_ROOT, '.berth', 'docker-scale-'));
const NAME = `t${process.pid}`;
let docker: Docker;
let serve: ServeProcess;
let base = '';

/** This run's containers (by the control-plane label), running or not. */
const containers = (all = false) => listContainers(docker, NAME, all);
const waitFor = <T>(what: string, ms: number, check: () => T | Promise<T>) =>
  waitUntil(what, ms, check, () => serve?.text ?? '');

async function health(ep: string): Promise<{ jobs: Record<string, number>; workers: Record<string, number> }> {
  return (await api(base, 'GET', `/v2/${ep}/health`)).json as never;
}

async function submit(ep: string, input: unknown): Promise<string> {
  const r = await api(base, 'POST', `/v2/${ep}/run`, { input });
  expect(r.status).toBe(200);
  return r.json['id'] as string;
}

async function allCompleted(ids: string[], ms: number): Promise<void> {
  await waitFor(`${ids.length} jobs to complete`, ms, async () => {
    for (const id of ids)
      if ((await api(base, 'GET', `/v2/sleep/status/${id}`)).json['status'] !== 'COMPLETED') return false;
    return true;
  });
}

const lines = (re: RegExp) => serve.text.split('\n').filter((l) => re.test(l));

describe.skipIf(skip !== undefined)('berth serve --scale docker (real dockerd, examples/basic sleep image)', () => {
  beforeAll(async () => {
    docker = await startDocker();
    // berth serve reaches the daemon this test started (its socket is not the default one).
    if (docker.env['DOCKER_HOST']) process.env['DOCKER_HOST'] = docker.env['DOCKER_HOST'];
    buildBasicImage(docker, 'sleep', IMAGE, work);
    const host = { network: 'host' };
    writeFileSync(
      join(work, 'berth.config.json'),
      JSON.stringify({
        endpoints: {
          sleep: {
            worker: './sleep.ts',
            minWorkers: 0,
            maxWorkers: 3,
            idleTimeoutMs: 1000,
            concurrency: 1,
            drainTimeoutMs: 8000,
            image: IMAGE,
            docker: host,
          },
          missing: { worker: './x.ts', maxWorkers: 1, image: 'berth-scale-test/not-built', docker: host },
          // The stand-in base image's CMD is a bare `node`: with no stdin it exits at once, before connecting.
          crash: { worker: './x.ts', maxWorkers: 1, image: 'node:20-bookworm-slim', docker: host },
        },
      }),
    );
    ({ serve, base } = await startScaleServe(join(work, 'berth.config.json'), work, NAME));
    console.log(
      `[docker-scale] load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  }, 600_000);

  afterAll(() => stopScaleRun(docker, NAME, work), 120_000);

  it('scales 0 -> 3 on a burst, each job done once, then back to 0 after idle; cold starts in /metrics', async () => {
    expect(containers()).toEqual([]);
    const ids = await Promise.all(Array.from({ length: 6 }, () => submit('sleep', { ms: 1500 })));
    // While its containers start, a queued job says it waits for a cold start (/status's waitingFor, issue #38).
    const last = ids.at(-1)!;
    const waited = await waitFor('a queued job waiting for a cold start', 60_000, async () => {
      const st = (await api(base, 'GET', `/v2/sleep/status/${last}`)).json;
      return st['status'] !== 'IN_QUEUE' || st['waitingFor'] === 'cold_start' ? st : undefined;
    });
    expect(waited, serve.text.slice(-3000)).toMatchObject({ status: 'IN_QUEUE', waitingFor: 'cold_start' });
    let most = 0;
    await waitFor('3 containers', 120_000, () => (most = Math.max(most, containers().length)) === 3);
    await allCompleted(ids, 180_000);
    expect((await health('sleep')).jobs).toMatchObject({ completed: 6, retried: 0, inQueue: 0, inProgress: 0 });
    await waitFor('scale to zero', 60_000, () => {
      most = Math.max(most, containers().length);
      return containers(true).length === 0;
    });
    expect(most).toBe(3);
    expect(lines(/scaling sleep down/).length).toBe(3);
    const metrics = await (
      await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer berth_durability_key' } })
    ).text();
    expect(metrics).toMatch(/berth_worker_cold_start_seconds_count\{endpoint="sleep",until="first_job_done"\} 3/);
    expect(metrics).toMatch(/berth_worker_cold_start_seconds_count\{endpoint="sleep",until="first_job_assigned"\} 3/);
  }, 300_000);

  it('scale-downs while jobs run and arrive lose nothing and run nothing twice', async () => {
    const ids: string[] = [];
    const before = lines(/scaling sleep down/).length;
    const completedBefore = (await health('sleep')).jobs['completed'] ?? 0;
    // Rounds: a long job keeps one worker busy while short ones finish, their workers go idle and are stopped;
    // the next round's jobs arrive around the moment those stops begin.
    for (let round = 0; round < 5; round++) {
      ids.push(await submit('sleep', { ms: 4000 }));
      ids.push(...(await Promise.all([submit('sleep', { ms: 300 }), submit('sleep', { ms: 300 })])));
      await waitFor('a scale-down', 60_000, () => lines(/scaling sleep down/).length > before + round);
    }
    // What a scale-down does to a container that has a job (the race of a job assigned as it is stopped):
    // SIGTERM with the stop timeout; the worker drains, the job finishes there, once.
    const busy = await submit('sleep', { ms: 3000 });
    ids.push(busy);
    const worker = await waitFor('the job to start', 60_000, async () => {
      const st = (await api(base, 'GET', `/v2/sleep/status/${busy}`)).json;
      return st['status'] === 'IN_PROGRESS' ? (st['workerId'] as string | undefined) : undefined;
    });
    const stopped = new Promise((r) =>
      spawn('docker', ['stop', '-t', '11', worker], { env: docker.env }).on('exit', r),
    );
    await allCompleted(ids, 240_000);
    expect(await stopped).toBe(0);
    expect((await api(base, 'GET', `/v2/sleep/status/${busy}`)).json, serve.text.slice(-6000)).toMatchObject({
      status: 'COMPLETED',
      workerId: worker,
    });
    const h = await health('sleep');
    expect(h.jobs, serve.text.slice(-6000)).toMatchObject({ completed: completedBefore + ids.length, retried: 0 });
    expect(lines(/scaling sleep down/).length - before).toBeGreaterThanOrEqual(5);
    await waitFor('scale to zero', 60_000, () => containers(true).length === 0);
  }, 400_000);

  it('a missing image and a container that exits at once: reported, backed off, unhealthy in /health, the reason in /status', async () => {
    const missing = await submit('missing', {});
    const crash = await submit('crash', {});
    await waitFor('the crash backoff to reach 4 s', 120_000, () => lines(/crash 4 in a row/).length > 0);
    expect(lines(/image berth-scale-test\/not-built not found in the docker daemon/).length).toBe(1);
    expect(lines(/worker container \S+crash-1 exited with code 0 before connecting/).length).toBeGreaterThanOrEqual(4);
    // The backoff doubles: 0.5, 1, 2, 4 s between starts (not a start every tick). Only the crash endpoint's lines:
    // a sleep container stopped by the test before (younger than the minimum uptime) may add its own crash 1.
    const backoffs = lines(/endpoint crash: .*next start in/);
    expect(
      backoffs.filter((l) => /next start in (0\.5|1|2|4) s/.test(l)),
      backoffs.join('\n'),
    ).toHaveLength(4);
    expect((await health('missing')).workers.unhealthy).toBe(1);
    expect((await health('crash')).workers.unhealthy).toBe(1);
    expect((await health('missing')).jobs.inQueue).toBe(1);
    // Why the jobs are still queued (issue #38): the scaler's reasons on /status and /health.
    expect((await api(base, 'GET', `/v2/missing/status/${missing}`)).json).toMatchObject({
      status: 'IN_QUEUE',
      waitingFor: 'image_missing',
    });
    expect((await api(base, 'GET', `/v2/crash/status/${crash}`)).json).toMatchObject({
      status: 'IN_QUEUE',
      waitingFor: 'crash_loop',
    });
    expect((await health('missing')) as unknown).toMatchObject({ waitingFor: 'image_missing' });
    expect(serve.child.exitCode).toBeNull();
    const metrics = await (
      await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer berth_durability_key' } })
    ).text();
    expect(metrics).toMatch(/berth_worker_start_failures_total\{endpoint="missing",reason="image_missing"\} [1-9]/);
    expect(metrics).toMatch(/berth_worker_start_failures_total\{endpoint="crash",reason="exited_early"\} ([4-9]|\d\d)/);
  }, 200_000);
});
