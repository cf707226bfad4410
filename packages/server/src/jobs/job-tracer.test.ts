import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { resolveServerOptions } from '../options.js';
import { call, listening, ScriptedWorker, untilStatus } from '../testing.test-helpers.js';

/** A tracer that keeps finished spans in memory; not registered globally (the server is handed it). */
function memoryTracer(sampler?: Sampler) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
    ...(sampler ? { sampler } : {}),
  });
  return { tracer: provider.getTracer('test'), spans: () => exporter.getFinishedSpans() };
}

describe('job spans (OpenTelemetry) on the control plane', () => {
  it('tracing off: job.assign carries no traceparent', async () => {
    await using s = await listening();
    const w = await ScriptedWorker.connect(s.url);
    await w.next('welcome');
    await call(s.server, 'POST', '/v2/echo/run', { body: { input: { a: 1 } } });
    const assign = await w.next('job.assign');
    expect(assign.traceparent).toBeUndefined();
    await w.close();
  });

  it("a requeue ends the run in error and the next run has its own queue wait; the caller's traceparent is continued", async () => {
    const { tracer, spans } = memoryTracer();
    await using s = await listening({ tracer, workerGraceMs: 0 });
    const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const { body } = await call(s.server, 'POST', '/v2/echo/run', {
      body: { input: { a: 1 } },
      headers: { traceparent: caller },
    });
    const lost = await ScriptedWorker.connect(s.url, { workerId: 'lost' });
    const first = await lost.next('job.assign');
    expect(first.traceparent).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    await lost.close(); // the worker is gone: the job goes back to the queue
    await untilStatus(s.server, 'echo', body.id, 'IN_QUEUE');
    const w = await ScriptedWorker.connect(s.url, { workerId: 'w2' });
    const second = await w.next('job.assign');
    expect(second.attempt).toBe(2);
    w.send({ type: 'job.complete', id: body.id, attempt: 2, output: { ok: true } });
    await untilStatus(s.server, 'echo', body.id, 'COMPLETED');
    await w.close();

    const all = spans();
    const named = (name: string) => all.filter((x) => x.name === name);
    const [request] = named('POST /v2/:endpoint/run');
    const [job] = named('berth.job');
    const runs = named('berth.run');
    expect(request?.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(request?.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
    expect(job?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    expect(
      runs.map((r) => [r.attributes['berth.worker.id'], r.attributes['berth.job.attempt'], r.status.code]),
    ).toEqual([
      ['lost', 1, 2], // SpanStatusCode.ERROR
      ['w2', 2, 0],
    ]);
    expect(runs[0]?.status.message).toMatch(/^requeued: /);
    expect(named('berth.queue_wait')).toEqual([]); // the wait is an attribute of each run (issue #40)
    for (const x of runs) expect(x.parentSpanContext?.spanId).toBe(job?.spanContext().spanId);
    const waited = runs.map((r) => r.attributes['berth.queue_wait_ms'] as number);
    expect(waited.every((ms) => ms >= 0)).toBe(true);
    // The second run's wait counts from the requeue, not from the submit: less than the time since the submit.
    const sinceSubmit = (r: (typeof runs)[number]) =>
      (r.startTime[0] - job!.startTime[0]) * 1000 + (r.startTime[1] - job!.startTime[1]) / 1e6;
    expect(waited[1]).toBeLessThan(sinceSubmit(runs[1]!) + 2);
    // Each traceparent the workers got names its own run span.
    expect(first.traceparent).toContain(runs[0]?.spanContext().spanId);
    expect(second.traceparent).toContain(runs[1]?.spanContext().spanId);
    expect(job?.attributes['berth.job.status']).toBe('COMPLETED');
  });

  const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
  const CALLER_SPAN = 'b7ad6b7169203331';

  it('trustTraceparent false: a new root span linked to the caller, whose trace the worker gets instead', async () => {
    const { tracer, spans } = memoryTracer();
    await using s = await listening({ tracer, trustTraceparent: false });
    const w = await ScriptedWorker.connect(s.url);
    const { body } = await call(s.server, 'POST', '/v2/echo/run', {
      body: { input: { a: 1 } },
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    });
    const assign = await w.next('job.assign');
    w.send({ type: 'job.complete', id: body.id, attempt: 1, output: { ok: true } });
    await untilStatus(s.server, 'echo', body.id, 'COMPLETED');
    await w.close();
    const [request] = spans().filter((x) => x.name === 'POST /v2/:endpoint/run');
    const traceId = request?.spanContext().traceId;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe(CALLER_TRACE);
    expect(request?.parentSpanContext).toBeUndefined();
    expect(request?.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[CALLER_TRACE, CALLER_SPAN]]);
    expect(assign.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    for (const x of spans()) expect(x.spanContext().traceId).toBe(traceId);
  });

  it("a caller cannot force sampling when untrusted (the tracer's own sampler decides); trusted, it can", async () => {
    const off = () => new ParentBasedSampler({ root: new AlwaysOffSampler() });
    const sampled = { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` };
    for (const trustTraceparent of [true, false]) {
      const { tracer, spans } = memoryTracer(off());
      await using s = await listening({ tracer, trustTraceparent });
      const w = await ScriptedWorker.connect(s.url);
      const { body } = await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} }, headers: sampled });
      const assign = await w.next('job.assign');
      w.send({ type: 'job.complete', id: body.id, attempt: 1, output: {} });
      await untilStatus(s.server, 'echo', body.id, 'COMPLETED');
      await w.close();
      if (trustTraceparent) {
        expect(spans().map((x) => x.name)).toContain('berth.job');
        expect(assign.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
      } else {
        expect(spans()).toEqual([]);
        expect(assign.traceparent).toMatch(/-00$/);
      }
    }
  });

  it('a /runsync request span stands for its job: two spans here, the job id and status on the request span', async () => {
    const { tracer, spans } = memoryTracer();
    await using s = await listening({ tracer });
    const w = await ScriptedWorker.connect(s.url);
    const answer = call(s.server, 'POST', '/v2/echo/runsync', { body: { input: { a: 1 } } });
    const assign = await w.next('job.assign');
    w.send({ type: 'job.complete', id: assign.id, attempt: 1, output: { ok: true } });
    expect((await answer).body.status).toBe('COMPLETED');
    await w.close();
    const all = spans();
    expect(all.map((x) => x.name).sort()).toEqual(['POST /v2/:endpoint/runsync', 'berth.run']);
    const request = all.find((x) => x.name.startsWith('POST'))!;
    const run = all.find((x) => x.name === 'berth.run')!;
    expect(run.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(request.attributes).toMatchObject({
      'berth.job.id': assign.id,
      'berth.endpoint.id': 'echo',
      'berth.job.status': 'COMPLETED',
    });
    expect(run.attributes['berth.queue_wait_ms']).toBeGreaterThanOrEqual(0);
    expect(assign.traceparent).toContain(run.spanContext().spanId);
  });

  it("a failed job's spans say FAILED, without the job's error text", async () => {
    const { tracer, spans } = memoryTracer();
    await using s = await listening({ tracer });
    const w = await ScriptedWorker.connect(s.url);
    const { body } = await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } });
    await w.next('job.assign');
    const secret = 'token sk-live-1234 for user@example.com rejected';
    w.send({ type: 'job.fail', id: body.id, attempt: 1, error: secret });
    const failed = await untilStatus(s.server, 'echo', body.id, 'FAILED');
    expect(failed.error).toContain('sk-live-1234'); // the job object keeps it
    await w.close();
    const failedSpans = spans().filter((x) => x.name.startsWith('berth.') || x.name.startsWith('POST'));
    const [job] = failedSpans.filter((x) => x.name === 'berth.job');
    expect(job?.status).toEqual({ code: 2, message: 'FAILED' }); // SpanStatusCode.ERROR
    expect(JSON.stringify(failedSpans.map((x) => [x.status, x.attributes, x.events]))).not.toContain('sk-live');
  });

  it('trustTraceparent must be a boolean', () => {
    expect(() => resolveServerOptions({ trustTraceparent: 'false' as unknown as boolean })).toThrow(
      'option trustTraceparent must be true or false (got "false")',
    );
  });
});
