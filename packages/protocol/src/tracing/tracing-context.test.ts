import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterAll, describe, expect, it } from 'vitest';
import { startTracing, stopTracing } from './tracing.js';

// Its own file: startTracing sets process-wide state once (tracing.test.ts starts it with the default).
describe('startTracing with activeContext false (the control plane, issue #40)', () => {
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  afterAll(() => receiver.close());

  it('registers no context manager: spans still export, context.with does not carry a context across awaits', async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const tracer = await startTracing('t', { OTEL_EXPORTER_OTLP_ENDPOINT: url }, { activeContext: false });
    const span = tracer!.startSpan('berth.run');
    expect(span.isRecording()).toBe(true);
    const seen = await context.with(trace.setSpan(ROOT_CONTEXT, span), async () => {
      await new Promise((r) => setTimeout(r, 1));
      return trace.getActiveSpan();
    });
    expect(seen).toBeUndefined(); // no AsyncLocalStorage (on Node 20 it would hook every promise)
    span.end();
    await stopTracing();
  });
});
