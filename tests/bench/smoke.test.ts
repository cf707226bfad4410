// Smoke test of the bench harness (not timed: tiny sizes): every target starts (real servers, workers, PostgreSQL
// and Redis peers where available), runs every workload it lists and yields finite figures; the harness's own
// checks of the no-op answers (echo output, every stream chunk in order) pass. A system test (about a minute):
// the fast check that a wrong answer is reported as an error is bench/bench.test.ts, in the unit project.
import { describe, expect, it } from 'vitest';
import { TINY } from '../../bench/config.js';
import { GOAL_SETS } from '../../bench/lib/goals.js';
import { FIGURES, goals, markdown } from '../../bench/lib/report.js';
import { runBench } from '../../bench/lib/runner.js';
import { TARGETS, type Target } from '../../bench/targets/index.js';

/** Figures each workload must produce. */
const EXPECTED: Record<string, string[]> = {
  runsync: ['startup_ms', 'runsync_c1_p50_ms', 'runsync_c1_p99_ms', 'runsync_c50_rps', 'runsync_c50_cpu_ms_per_job'],
  run: ['run_c50_submit_rps', 'run_completions_per_s', 'run_cpu_ms_per_job'],
  status: ['status_c50_rps'],
  fill: ['fill_submit_rps', 'fill_heap_b_per_job', 'fill_rss_b_per_job', 'drain_s', 'drain_jobs_per_s'],
  stream: ['stream_chunk_p50_ms', 'stream_chunk_p99_ms', 'stream_chunks_per_s'],
};

describe('bench harness (smoke run of every target)', () => {
  it('runs every available target and every workload it lists, with well-formed results', {
    timeout: 420_000,
  }, async () => {
    const runnable: Target[] = [];
    for (const t of TARGETS) {
      const why = await t.unavailable?.();
      if (why) console.warn(`bench smoke: skipping ${t.name}: ${why}`);
      else runnable.push(t);
    }
    expect(runnable.map((t) => t.name)).toEqual(
      expect.arrayContaining(['L0', 'L1', 'berth-memory', 'berth-sqlite-normal', 'berth-sqlite-full']),
    );
    const results = await runBench(runnable, TINY);
    for (const [i, r] of results.entries()) {
      const t = runnable[i]!;
      expect(r.errors, r.name).toEqual([]);
      for (const w of t.workloads.filter((x) => !TINY.skip?.includes(x))) {
        for (const key of EXPECTED[w]!) {
          const v = r.rounds[key];
          expect(v, `${r.name} ${key}`).toHaveLength(TINY.rounds);
          expect(Number.isFinite(v![0]), `${r.name} ${key} = ${v![0]}`).toBe(true);
        }
      }
      expect(r.rounds['runsync_c50_rps']![0]).toBeGreaterThan(0);
      if (t.workloads.includes('stream')) expect(r.rounds['stream_chunks_per_s']![0]).toBeGreaterThan(0);
    }
    const md = markdown(results, { mode: 'smoke' });
    for (const [, label] of FIGURES.slice(0, 4)) expect(md).toContain(label);
    // Goals among targets that ran are measured once from this round (the BullMQ peer may be unavailable);
    // the heap goal says it was not measured: a 100-job fill is too small to mean anything.
    // A goal whose figures were all measured here (its `uses`) has exactly one round; others (BENCH_OBSERVE's
    // targets, the big-payload workload) were not run by this smoke test.
    const measured = (name: string, key: string) =>
      (results.find((r) => r.name === name)?.rounds[key]?.length ?? 0) > 0;
    const specs = GOAL_SETS.flat();
    for (const [i, g] of goals(results).entries()) {
      const uses = specs[i]!.uses;
      if (!g.goal.includes('heap') && uses.every(([n, k]) => measured(n, k))) expect(g.summary.n, g.goal).toBe(1);
    }
    expect(goals(results).find((g) => g.goal.includes('heap'))?.note).toMatch(/not measured/);
  });
});
