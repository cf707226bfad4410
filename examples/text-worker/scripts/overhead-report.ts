/** The overhead benchmark's figures per round, their medians and spreads, and its markdown tables (overhead.ts). */

/** One side of one round: tokens or jobs, wall time, and CPU (µs) of the server and the worker side. */
export interface Side {
  units: number;
  ms: number;
  /** `berth dev` (the control plane); 0 in process. */
  serverUs: number;
  /** The endpoint's worker process (with its threads and children); in process, this process. */
  workerUs: number;
  /** CPU the fake model's busy loop took on that side (0 for a real model). */
  burnUs: number;
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface EndpointSummary {
  unit: 'token' | 'job';
  /** In process: CPU per unit, µs (the busy loop included). */
  inProcessUs: Spread;
  /** Through Berth: the control plane's CPU per unit, µs. */
  serverUs: Spread;
  /** Through Berth: the worker process's CPU per unit, µs (the busy loop included). */
  workerUs: Spread;
  /** The busy loop's own CPU per unit in process and in the worker (the fake model; 0 otherwise). */
  burnInProcessUs: Spread;
  burnWorkerUs: Spread;
  /** (server + worker − the worker's busy loop) − (in process − its busy loop), per unit, µs. */
  addedUs: Spread;
  /** The same without taking the busy loops' measured CPU out (server + worker − in process). */
  addedRawUs: Spread;
  /** The old figure: units/s through Berth ÷ in process. */
  ratio: Spread;
  goalUs: number;
  verdict: 'PASS' | 'MISS' | 'UNDECIDED';
}

const spread = (xs: number[]): Spread => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)] ?? Number.NaN, min: s[0] ?? Number.NaN, max: s.at(-1) ?? Number.NaN };
};

/** Goals of issue #40: added CPU per streamed token ≤ 15 µs, per batched job ≤ 100 µs. */
export const GOAL_US = { token: 15, job: 100 } as const;

export function summarize(rounds: Record<string, { inProcess: Side; berth: Side }[]>): Record<string, EndpointSummary> {
  const out: Record<string, EndpointSummary> = {};
  for (const [ep, rs] of Object.entries(rounds)) {
    const unit = ep.includes('text') ? 'token' : 'job';
    const per = (f: (r: { inProcess: Side; berth: Side }) => number) => spread(rs.map(f));
    const ip = (r: { inProcess: Side }) => r.inProcess.workerUs / r.inProcess.units;
    const via = (r: { berth: Side }) => (r.berth.serverUs + r.berth.workerUs) / r.berth.units;
    const burnIp = (r: { inProcess: Side }) => r.inProcess.burnUs / r.inProcess.units;
    const burnW = (r: { berth: Side }) => r.berth.burnUs / r.berth.units;
    const added = per((r) => via(r) - burnW(r) - (ip(r) - burnIp(r)));
    const goalUs = GOAL_US[unit];
    out[ep] = {
      unit,
      inProcessUs: per(ip),
      serverUs: per((r) => r.berth.serverUs / r.berth.units),
      workerUs: per((r) => r.berth.workerUs / r.berth.units),
      burnInProcessUs: per(burnIp),
      burnWorkerUs: per(burnW),
      addedUs: added,
      addedRawUs: per((r) => via(r) - ip(r)),
      ratio: per((r) => r.berth.units / r.berth.ms / (r.inProcess.units / r.inProcess.ms)),
      goalUs,
      verdict: added.max <= goalUs ? 'PASS' : added.min > goalUs ? 'MISS' : 'UNDECIDED',
    };
  }
  return out;
}

const f = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(1));
const s = (x: Spread) => `${f(x.median)} (${f(x.min)}–${f(x.max)})`;
const r2 = (x: Spread) => `${x.median.toFixed(2)} (${x.min.toFixed(2)}–${x.max.toFixed(2)})`;

export function printTables(meta: Record<string, unknown>, sum: Record<string, EndpointSummary>): void {
  console.log(JSON.stringify(meta));
  console.log(
    '\n| endpoint (model) | unit | in process: CPU per unit (µs) | Berth: server (µs) | Berth: worker (µs) | busy loop in process / in the worker (µs) | **added by Berth (µs)** | added, loop not subtracted (µs) | goal | Berth ÷ in process, units/s (old ratio) |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---|---:|');
  const names: Record<string, string> = {
    text: '`text` (stories260K), one stream at a time',
    'fake-text': '`fake-text` (fake model), one stream at a time',
    'fake-text-c16': '`fake-text` (fake model), 16 streams at once',
    score: '`score` (stories260K), batched, c=16',
    'fake-score': '`fake-score` (fake model), batched, c=16',
  };
  for (const [ep, x] of Object.entries(sum)) {
    const loop = x.burnInProcessUs.max > 0 ? `${s(x.burnInProcessUs)} / ${s(x.burnWorkerUs)}` : '–';
    console.log(
      `| ${names[ep] ?? ep} | ${x.unit} | ${s(x.inProcessUs)} | ${s(x.serverUs)} | ${s(x.workerUs)} | ${loop} | **${s(x.addedUs)}** | ${s(x.addedRawUs)} | ≤ ${x.goalUs}: ${x.verdict} | ${r2(x.ratio)} |`,
    );
  }
}
