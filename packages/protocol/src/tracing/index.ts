/**
 * `@berth/protocol/tracing`: OpenTelemetry start-up (the SDK, optional peer dependencies, is loaded only when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set), the tracer Berth's spans use, and W3C `traceparent` text.
 */
export { berthTracer, startTracing, stopTracing, type StartTracingOptions } from './tracing.js';
export { formatTraceparent, parseTraceparent } from './traceparent.js';
