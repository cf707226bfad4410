// Two figures for `berth dev` on examples/basic:
//   1. time from spawning `berth dev` to its `ready` line (median of N starts), and to all workers connected;
//   2. /runsync round trips per second against `echo` with a closed loop of C concurrent clients for S seconds.
//
// Run after `npm run build` at the repository root:
//   node --import tsx packages/cli/scripts/bench.ts [--starts 5] [--clients 10] [--seconds 5]
import { parseArgs } from 'node:util';
import { BASIC_ENDPOINTS, startBerthDev } from '../../../tests/e2e/harness.test-helpers.js';

const { values } = parseArgs({
  options: {
    starts: { type: 'string', default: '5' },
    clients: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '5' },
  },
});
const starts = Number(values.starts);
const clients = Number(values.clients);
const seconds = Number(values.seconds);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

// 1. Startup.
const ready: number[] = [];
const connected: number[] = [];
for (let i = 0; i < starts; i++) {
  const t0 = Date.now();
  const berth = await startBerthDev();
  ready.push(berth.startupMs);
  await berth.waitForWorkers(BASIC_ENDPOINTS);
  connected.push(Date.now() - t0);
  await berth[Symbol.asyncDispose]();
}
console.log(`startup to "ready" line:      median ${median(ready)} ms  (runs: ${ready.join(', ')} ms)`);
console.log(`startup to all workers ready: median ${median(connected)} ms  (runs: ${connected.join(', ')} ms)`);

// 2. runsync throughput.
{
  await using berth = await startBerthDev({ waitForWorkers: ['echo'] });
  const url = `${berth.url}/v2/echo/runsync`;
  const headers = { authorization: `Bearer ${berth.apiKey}`, 'content-type': 'application/json' };
  const call = async (n: number) => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ input: { n } }) });
    const body = (await res.json()) as { status?: string };
    return res.status === 200 && body.status === 'COMPLETED';
  };
  for (let i = 0; i < 50; i++) await call(i); // warm-up
  const latencies: number[] = [];
  let failures = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let n = 0; performance.now() < end; n++) {
        const s = performance.now();
        if (await call(c * 1e6 + n)) latencies.push(performance.now() - s);
        else failures++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  console.log(
    `runsync echo, ${clients} clients x ${seconds} s: ${(latencies.length / elapsed).toFixed(0)} req/s ` +
      `(${latencies.length} ok, ${failures} failed; latency p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms)`,
  );
}
