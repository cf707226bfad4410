import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { call, listening, ScriptedWorker, untilStatus } from '../testing.test-helpers.js';

/** A tracer that keeps finished spans in memory; not registered globally (the server is handed it). */
function memoryTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
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

  it("a requeue ends the run in error and opens a new queue wait; the caller's traceparent is continued", async () => {
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
    const waits = named('berth.queue_wait');
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
    expect(waits).toHaveLength(2);
    for (const x of [...runs, ...waits]) expect(x.parentSpanContext?.spanId).toBe(job?.spanContext().spanId);
    // Each traceparent the workers got names its own run span.
    expect(first.traceparent).toContain(runs[0]?.spanContext().spanId);
    expect(second.traceparent).toContain(runs[1]?.spanContext().spanId);
    expect(job?.attributes['berth.job.status']).toBe('COMPLETED');
  });
});
