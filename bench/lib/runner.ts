/** Runs every workload against every target, interleaved (round 1: A B C, round 2: C B A, ...; see plan.ts). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Running, Target, Workload } from '../targets/types.js';
import { roundPlan, totalRounds, type Step } from './plan.js';
import { big } from '../workloads/big.js';
import { fill } from '../workloads/fill.js';
import { stream } from '../workloads/stream.js';
import { throughput } from '../workloads/throughput.js';
import type { BenchConfig, Figures } from '../workloads/types.js';
import type { TargetResult } from './target-result.js';

async function withTarget<T>(t: Target, fn: (run: Running) => Promise<T>): Promise<{ value: T; readyMs: number }> {
  const dir = mkdtempSync(join(tmpdir(), `berth-bench-${t.name}-`));
  let run: Running | undefined;
  try {
    run = await t.start(dir);
    return { value: await fn(run), readyMs: run.readyMs };
  } finally {
    await run?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One target, one round: a fresh start for the worker-connected workloads, another for the fill. */
async function measure(step: Step, errors: string[]): Promise<Figures> {
  const { target: t, cfg, workloads } = step;
  const f: Figures = {};
  const has = (w: Workload) => workloads.includes(w);
  const attempt = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      errors.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  if (has('runsync') || has('run') || has('stream') || has('big'))
    await attempt('runsync/run/status/stream', async () => {
      const { readyMs } = await withTarget(t, async (run) => {
        const worker = await run.startWorker('echo');
        await worker.go();
        const pids = () => [...run.serverProcs().map((p) => p.pid), worker.proc.pid];
        if (has('runsync') || has('run')) Object.assign(f, await throughput(run, cfg, workloads, pids));
        if (has('big')) await big(run, cfg, f, t.name);
        await worker.stop();
        if (has('stream')) Object.assign(f, await stream(run, cfg));
      });
      f['startup_ms'] = readyMs;
    });
  if (has('fill')) {
    const fillCfg = t.maxFill === undefined ? cfg : { ...cfg, fillJobs: Math.min(cfg.fillJobs, t.maxFill) };
    await attempt('fill', async () => void Object.assign(f, (await withTarget(t, (run) => fill(run, fillCfg))).value));
  }
  return f;
}

export async function runBench(
  targets: readonly Target[],
  cfg: BenchConfig,
  log: (line: string) => void = () => {},
): Promise<TargetResult[]> {
  const results = new Map(
    targets.map((t): [Target, TargetResult] => [
      t,
      { name: t.name, description: t.description, rounds: {}, errors: [] },
    ]),
  );
  const rounds = totalRounds(cfg);
  for (let round = 0; round < rounds; round++) {
    for (const step of roundPlan(targets, cfg, round)) {
      const r = results.get(step.target)!;
      const t0 = performance.now();
      const f = await measure(step, r.errors);
      for (const [k, v] of Object.entries(f)) (r.rounds[k] ??= Array<number>(rounds).fill(NaN))[round] = v;
      const brief = ['runsync_c50_rps', 'runsync_c1_p50_ms', 'fill_heap_b_per_job']
        .filter((k) => f[k] !== undefined)
        .map((k) => `${k}=${f[k]!.toFixed(k.endsWith('rps') ? 0 : 2)}`)
        .join(' ');
      log(
        `round ${round + 1}/${rounds} ${step.target.name} [${step.workloads.join(',')}]: ${brief} (${((performance.now() - t0) / 1000).toFixed(1)} s)${r.errors.length ? ` errors: ${r.errors.length}` : ''}`,
      );
    }
  }
  return [...results.values()];
}
