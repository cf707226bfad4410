/** Turns the results into the markdown table, the goal verdicts and the JSON document. */
import type { TargetResult } from './target-result.js';
import { pair } from './goal-spec.js';
import { goals } from './goals.js';
import { fmtNum, fmtSummary, summarize, type Summary } from './stats.js';

export { goals, type Goal } from './goals.js';

/** Every figure, in table order, with its label. */
export const FIGURES: [key: string, label: string][] = [
  ['startup_ms', 'start-up to ready (ms)'],
  ['runsync_c1_p50_ms', '/runsync c=1 p50 (ms)'],
  ['runsync_c1_p99_ms', '/runsync c=1 p99 (ms)'],
  ['runsync_c50_rps', '/runsync c=50 (req/s)'],
  ['runsync_c50_p50_ms', '/runsync c=50 p50 (ms)'],
  ['runsync_c50_p99_ms', '/runsync c=50 p99 (ms)'],
  ['runsync_c50_cpu_ms_per_job', '/runsync c=50 CPU per job (ms, server+worker)'],
  ['runsync_c50_db_cpu_ms_per_job', '/runsync c=50 CPU per job of the PostgreSQL backends (ms)'],
  ['run_c50_submit_rps', '/run c=50 submits (req/s)'],
  ['run_completions_per_s', '/run c=50 completions at the worker (jobs/s)'],
  ['run_cpu_ms_per_job', '/run CPU per job (ms, server+worker)'],
  ['run_db_cpu_ms_per_job', '/run CPU per job of the PostgreSQL backends (ms)'],
  ['status_c50_rps', '/status c=50 (req/s)'],
  ['fill_jobs', 'fill: jobs queued (after the warm-up)'],
  ['fill_submit_rps', 'fill: /run with no worker (req/s)'],
  ['fill_heap_b_per_job', 'fill: heap growth per queued job (B)'],
  ['fill_rss_b_per_job', 'fill: RSS growth per queued job (B, server side)'],
  ['fill_store_b_per_job', 'fill: store on disk per queued job (B)'],
  ['drain_s', 'drain: connect worker to all done (s)'],
  ['drain_jobs_per_s', 'drain (jobs/s)'],
  ['drain_cpu_ms_per_job', 'drain CPU per job (ms, server+worker)'],
  ['stream_chunk_p50_ms', 'SSE latency per chunk p50 (ms)'],
  ['stream_chunk_p99_ms', 'SSE latency per chunk p99 (ms)'],
  ['stream_chunks_per_s', 'SSE chunks/s (back to back)'],
  ['big_c1_ms', '19 MiB /runsync, one (ms)'],
  ['big_c10_ms', '19 MiB /runsync, ten at once: all answered (ms)'],
  ['big_c10_stall_ms', 'longest event-loop stall in the server during the ten (ms)'],
  ['big_c10_retries', '503 overloaded retries during the ten'],
  ['big_bystander_p50_ms', 'small /runsync every 20 ms during the ten, p50 (ms)'],
  ['big_bystander_p99_ms', 'small /runsync every 20 ms during the ten, p99 (ms)'],
  ['big_bystander_max_ms', 'small /runsync every 20 ms during the ten, max (ms)'],
  ['big_c10_rss_growth_mb', 'server RSS growth during the ten (MB)'],
  ['big_pad_refused', 'three 19 MiB padding bodies refused (413/400)'],
  ['big_pad_cpu_ms_each', 'server CPU per padding body (ms)'],
  ['big_pad_rss_growth_mb', 'server RSS growth with three padding bodies (MB)'],
];

/** Side-by-side ratios (per round, then median): each target's /runsync c=50 against L1 and the peer. */
export function ratios(results: TargetResult[]): { target: string; vsL1: Summary; vsPeer: Summary }[] {
  const rps = (n: string) => results.find((r) => r.name === n)?.rounds['runsync_c50_rps'] ?? [];
  return results.map((r) => ({
    target: r.name,
    vsL1: summarize(pair(rps(r.name), rps('L1'), (a, b) => a / b)),
    vsPeer: summarize(pair(rps(r.name), rps('bullmq-aof-everysec'), (a, b) => a / b)),
  }));
}

export function markdown(results: TargetResult[], meta: Record<string, string>): string {
  const lines: string[] = [];
  lines.push(
    `Cells: median over rounds (min–max). ${Object.entries(meta)
      .map(([k, v]) => `${k}: ${v}`)
      .join('; ')}.`,
    '',
  );
  lines.push(`| figure | ${results.map((r) => r.name).join(' | ')} |`, `|---|${results.map(() => '---:').join('|')}|`);
  for (const [key, label] of FIGURES) {
    if (!results.some((r) => r.rounds[key])) continue;
    lines.push(`| ${label} | ${results.map((r) => fmtSummary(summarize(r.rounds[key] ?? []))).join(' | ')} |`);
  }
  lines.push('', '| /runsync c=50 ratio | ÷ L1 | ÷ bullmq-aof-everysec |', '|---|---:|---:|');
  for (const r of ratios(results)) lines.push(`| ${r.target} | ${fmtSummary(r.vsL1)} | ${fmtSummary(r.vsPeer)} |`);
  lines.push(
    '',
    'Verdicts: PASS or MISS only when every round is on the same side of the target; UNDECIDED when the spread straddles it.',
    '',
    '| goal | median | spread (min–max, rounds) | target | verdict |',
    '|---|---:|---:|---:|---|',
  );
  for (const g of goals(results)) {
    const s = g.summary;
    const spread = s.n === 0 ? 'n/a' : `${fmtNum(s.min)}–${fmtNum(s.max)} (${s.n})`;
    lines.push(
      `| ${g.goal} | ${fmtNum(s.median)} | ${spread} | ${g.kind === 'min' ? '≥' : '≤'} ${fmtNum(g.limit)} | ${g.verdict ?? g.note ?? 'n/a'} |`,
    );
  }
  const errs = results.flatMap((r) => r.errors.map((e) => `- ${r.name}: ${e}`));
  if (errs.length) lines.push('', '**Errors**', ...errs);
  lines.push('', 'Targets:', ...results.map((r) => `- \`${r.name}\`: ${r.description}`));
  return lines.join('\n');
}

export function toJson(results: TargetResult[], meta: Record<string, unknown>) {
  return {
    meta,
    targets: results.map((r) => ({
      name: r.name,
      description: r.description,
      errors: r.errors,
      figures: Object.fromEntries(Object.entries(r.rounds).map(([k, v]) => [k, { ...summarize(v), rounds: v }])),
    })),
    ratios: ratios(results),
    goals: goals(results),
  };
}
