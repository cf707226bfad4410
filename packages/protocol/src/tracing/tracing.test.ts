import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startTracing, stopTracing } from './tracing.js';

describe('startTracing: the OTLP encoding (issue #40)', () => {
  const got: { type: string | undefined; bytes: number }[] = [];
  const receiver = createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => {
      got.push({ type: req.headers['content-type'], bytes });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  afterAll(async () => {
    await stopTracing();
    receiver.close();
  });

  it('refuses a protocol it cannot export with, naming the variable', async () => {
    await expect(
      startTracing('t', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).rejects.toThrow('OTEL_EXPORTER_OTLP_PROTOCOL must be http/json or http/protobuf (got "grpc")');
    await expect(
      startTracing('t', {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/xml',
      }),
    ).rejects.toThrow('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be');
  });

  it('http/protobuf exports spans as application/x-protobuf', async () => {
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const tracer = await startTracing('t', {
      OTEL_EXPORTER_OTLP_ENDPOINT: url,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'HTTP/Protobuf',
    });
    expect(tracer).toBeDefined();
    tracer!.startSpan('berth.test', { attributes: { 'berth.job.id': 'j1' } }).end();
    await stopTracing(); // flushes
    expect(got).toHaveLength(1);
    expect(got[0]?.type).toBe('application/x-protobuf');
    expect(got[0]?.bytes).toBeGreaterThan(20);
  });
});
