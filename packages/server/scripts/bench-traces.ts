/**
 * What a job's spans cost with tracing on, in µs of CPU per job, without the rest of the job path (a loaded machine
 * makes throughput ratios noisy; this figure is not): the control plane's spans of a `/runsync` job (the request
 * and `berth.run`; before issue #40 also `berth.job` and `berth.queue_wait`) and the worker's `berth.handler`,
 * through the real SDK, BatchSpanProcessor and OTLP/HTTP exporter, to a receiver in this process that reads and
 * drops the exports (its CPU is counted). 50 jobs per event-loop turn, as at c=50. The usual variables apply
 * (`OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`, `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`).
 *
 *   node --import tsx packages/server/scripts/bench-traces.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { startTracing, stopTracing } from '@berth/protocol/tracing';
import { JobTracer } from '../src/jobs/job-tracer.js';
import type { JobRecord } from '../src/store/types.js';

const sink = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
});
await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
const tracer = await startTracing(
  'bench',
  { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: url },
  { activeContext: false },
);
if (!tracer) throw new Error('tracing did not start');
const jobs = new JobTracer(tracer);

async function perJobUs(n: number): Promise<number> {
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const job = { id: `job-${i}-u1`, endpointId: 'echo', sync: true, attempt: 1, status: 'COMPLETED' } as JobRecord;
    const { span, ctx } = jobs.request('POST', '/v2/:endpoint/runsync', {});
    jobs.queued(job, ctx);
    jobs.assigned(job, 'echo-1');
    const handler = tracer!.startSpan('berth.handler', { attributes: { 'berth.job.id': job.id } });
    handler.end();
    jobs.finished(job);
    span.end();
    if (i % 50 === 49) await turn();
  }
  await new Promise((r) => setTimeout(r, 50));
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n;
}

await perJobUs(5_000); // warm-up
const rounds: number[] = [];
for (let r = 0; r < 3; r++) rounds.push(await perJobUs(20_000));
await stopTracing();
sink.close();
const median = rounds.sort((a, b) => a - b)[1] ?? NaN;
process.stdout.write(
  `per /runsync job, its spans exported over OTLP ${process.env['OTEL_EXPORTER_OTLP_PROTOCOL'] ?? 'http/json'}: ${median.toFixed(1)} µs CPU (rounds ${rounds.map((x) => x.toFixed(1)).join(', ')})\n`,
);
