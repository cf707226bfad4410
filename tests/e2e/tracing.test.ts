import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { silentLogger } from '@berth/protocol/log';
import { startTracing, stopTracing } from '@berth/protocol/tracing';
import { parseJsonLogLine, type ParsedLogLine } from '@berth/protocol/internal';
import { createServer, type BerthServer } from '@berth/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pollUntil, REPO_ROOT } from './harness.test-helpers.js';
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.test-helpers.js';

const KEY = 'berth_trace_key';
const TOKEN = 'berthw_trace_token';
const HANDLER = join(REPO_ROOT, 'tests/e2e/fixtures/traced-handler.ts');
// The caller's trace: the request span must continue it.
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('a job traced from the HTTP request to the handler (OTLP/HTTP JSON to a real receiver)', () => {
  let receiver: OtlpReceiver;
  let server: BerthServer;
  let url = '';
  let worker: ReturnType<typeof spawn>;
  const workerLines: ParsedLogLine[] = [];

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    // The control plane in this process, tracing as `berth serve` does with OTEL_EXPORTER_OTLP_ENDPOINT set.
    expect(
      await startTracing('berth-server', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, { activeContext: false }),
    ).toBeDefined();
    server = createServer({ apiKeys: [KEY], workerTokens: [TOKEN], endpoints: ['traced'], logger: silentLogger });
    url = (await server.listen({ port: 0, host: '127.0.0.1' })).url;
    // A real worker process, tracing too (its spans reach the receiver on their own).
    worker = spawn(process.execPath, ['--import', 'tsx', HANDLER], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        BERTH_URL: url,
        BERTH_ENDPOINT_ID: 'traced',
        BERTH_WORKER_TOKEN: TOKEN,
        BERTH_WORKER_ID: 'traced-1',
        BERTH_LOG_FORMAT: 'json',
        OTEL_EXPORTER_OTLP_ENDPOINT: `${receiver.url}/`,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    createInterface({ input: worker.stderr! }).on('line', (l) => {
      const parsed = parseJsonLogLine(l);
      if (parsed) workerLines.push(parsed);
    });
    await pollUntil(
      async () =>
        (await (await fetch(`${url}/v2/traced/health`, { headers: auth() })).json()) as { workers: { idle: number } },
      (h) => h.workers.idle >= 1,
      45_000, // tsx compiling the handler and loading the SDK take long on a loaded machine
      100,
    );
  }, 60_000);

  afterAll(async () => {
    if (worker && worker.exitCode === null) worker.kill('SIGKILL');
    await server?.close({ drainMs: 0 });
    await stopTracing();
    await receiver?.[Symbol.asyncDispose]();
  });

  it('the spans of one job, parented across the control plane and the worker process, the queue wait on the run span', async () => {
    const res = await fetch(`${url}/v2/traced/runsync`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ input: { name: 'Ada' } }),
    });
    const job = (await res.json()) as { id: string; status: string; output: unknown };
    expect(job).toMatchObject({ status: 'COMPLETED', output: { greeted: 'Ada' } });

    // The worker exports within ~50 ms of the handler's end; the control plane's spans on stopTracing (flush).
    await pollUntil(
      async () => receiver.spans.filter((s) => s.service === 'berth-worker').length,
      (n) => n >= 2,
      20_000,
      50,
    );
    worker.kill('SIGTERM'); // drains and exports what it still holds
    await new Promise((resolve) => worker.once('exit', resolve));
    await stopTracing();
    expect(receiver.refused).toBe(0);

    const spans = receiver.spans.filter((s) => s.traceId === TRACE_ID);
    const one = (name: string): ReceivedSpan => {
      const found = spans.filter((s) => s.name === name);
      expect(found, `${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
      return found[0]!;
    };
    const request = one('POST /v2/:endpoint/runsync');
    // A /runsync request span stands for its job: no berth.job span, no queue-wait span (issue #40).
    expect(spans.map((s) => s.name).sort()).toEqual(
      ['POST /v2/:endpoint/runsync', 'berth.handler', 'berth.run', 'user.step'].sort(),
    );
    const run = one('berth.run');
    const handler = one('berth.handler');
    const step = one('user.step');

    expect(request).toMatchObject({ service: 'berth-server', parentSpanId: CALLER_SPAN, kind: 2 });
    expect(request.attributes).toMatchObject({
      'http.route': '/v2/:endpoint/runsync',
      'http.response.status_code': 200,
    });
    expect(request.attributes).toMatchObject({ 'berth.job.id': job.id, 'berth.job.status': 'COMPLETED' });
    expect(run).toMatchObject({ service: 'berth-server', parentSpanId: request.spanId });
    expect(run.attributes).toMatchObject({ 'berth.worker.id': 'traced-1', 'berth.job.attempt': 1 });
    expect(run.attributes['berth.queue_wait_ms']).toBeGreaterThanOrEqual(0);
    // The queue wait is the time from the request to the run's start (slack below: a millisecond clock).
    expect(Number(run.attributes['berth.queue_wait_ms'])).toBeLessThanOrEqual(
      Number(run.startNs - request.startNs) / 1e6 + 2,
    );
    // Across the process boundary, through job.assign's traceparent:
    expect(handler).toMatchObject({ service: 'berth-worker', parentSpanId: run.spanId });
    expect(handler.attributes).toMatchObject({
      'berth.job.id': job.id,
      'berth.worker.id': 'traced-1',
      'berth.endpoint.id': 'traced',
      'fixture.name': 'Ada', // set by the handler on job.trace
    });
    expect(step).toMatchObject({ service: 'berth-worker', parentSpanId: handler.spanId }); // the active context
    // In time: the run starts after the request; the handler runs inside the run; the result closes them.
    // (The SDK anchors each span to Date.now() at its start, a millisecond clock: 2 ms of slack.)
    const before = (a: bigint, b: bigint) => expect(a, `${a} <= ${b}`).toBeLessThanOrEqual(b + SLACK);
    before(request.startNs, run.startNs);
    before(run.startNs, handler.startNs);
    before(step.endNs, handler.endNs);
    before(handler.endNs, run.endNs);
    before(run.endNs, request.endNs);
    expect(step.endNs - step.startNs).toBeGreaterThanOrEqual(15_000_000n);

    // The handler's console line is a JSON log line of the job.
    expect(workerLines).toContainEqual(
      expect.objectContaining({
        msg: 'hello from the handler of Ada',
        fields: expect.objectContaining({ jobId: job.id, attempt: 1, workerId: 'traced-1', endpointId: 'traced' }),
      }),
    );

    // The trace as the receiver got it, for the docs (docs/observability.md).
    const t0 = request.startNs;
    const byId = new Map(spans.map((s) => [s.spanId, s.name]));
    const table = [request, run, handler, step].map(
      (s) =>
        `${s.name.padEnd(28)} ${s.service.padEnd(13)} parent=${(byId.get(s.parentSpanId) ?? `(caller ${s.parentSpanId})`).padEnd(28)} start=+${fmt(s.startNs - t0)} ms  duration=${fmt(s.endNs - s.startNs)} ms`,
    );
    mkdirSync(join(REPO_ROOT, 'test-artifacts/tracing'), { recursive: true });
    writeFileSync(join(REPO_ROOT, 'test-artifacts/tracing/one-job.txt'), `trace ${TRACE_ID}\n${table.join('\n')}\n`);
  }, 60_000);
});

const SLACK = 2_000_000n;
const auth = () => ({ authorization: `Bearer ${KEY}` });
const fmt = (ns: bigint) => (Number(ns) / 1e6).toFixed(2);
