import { isSpanContextValid, type SpanContext } from '@opentelemetry/api';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A span's W3C `traceparent` (version 00), what `job.assign` carries to the worker. Written here rather than by the
 * globally registered propagator, so a tracer handed to `createServer` works without one.
 *
 * @example formatTraceparent(span.spanContext()) // '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
 */
export function formatTraceparent(ctx: SpanContext): string {
  return `00-${ctx.traceId}-${ctx.spanId}-${(ctx.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * Reads a W3C `traceparent` (version 00; `tracestate` is not carried); undefined when it is not one, or names the
 * invalid all-zero trace or span.
 *
 * @example parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')?.spanId // '00f067aa0ba902b7'
 */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  const m = value === undefined ? null : TRACEPARENT.exec(value.trim());
  if (!m) return undefined;
  const ctx: SpanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16), isRemote: true };
  return isSpanContextValid(ctx) ? ctx : undefined;
}
