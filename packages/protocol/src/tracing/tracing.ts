import { trace, type Tracer } from '@opentelemetry/api';

/** The optional packages tracing needs (optional peer dependencies of `@berth/protocol`). */
export const TRACING_PACKAGES = [
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/resources',
] as const;

/** The exporter package of OTLP/HTTP protobuf (`OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`), in place of the JSON one. */
const PROTOBUF_EXPORTER_PACKAGE = '@opentelemetry/exporter-trace-otlp-proto';

/** How spans are encoded over OTLP/HTTP. */
type TracesProtocol = 'http/json' | 'http/protobuf';

/**
 * The OTLP encoding asked for: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else
 * `http/json` (Berth's default: its exporter package is the one installed with the others). Throws on another value
 * (`grpc` is not supported).
 *
 * @example tracesProtocol({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }) // 'http/protobuf'
 */
function tracesProtocol(env: NodeJS.ProcessEnv): TracesProtocol {
  const own = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL']?.trim();
  const name = own ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const raw = (own || env['OTEL_EXPORTER_OTLP_PROTOCOL']?.trim() || 'http/json').toLowerCase();
  if (raw === 'http/json' || raw === 'http/protobuf') return raw;
  throw new Error(
    `${name} must be http/json or http/protobuf (got ${JSON.stringify(raw)}); Berth does not export over grpc`,
  );
}

let active: { tracer: Tracer; stop: () => Promise<void> } | undefined;

/**
 * True when the standard OpenTelemetry environment asks for traces over OTLP: `OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set, and neither `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none`.
 *
 * @example tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }) // true
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env['OTEL_SDK_DISABLED']?.trim().toLowerCase() === 'true') return false;
  if (env['OTEL_TRACES_EXPORTER']?.trim().toLowerCase() === 'none') return false;
  return Boolean(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim() || env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim());
}

/** Where spans go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
function tracesUrl(env: NodeJS.ProcessEnv): string {
  const own = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim();
  if (own) return own;
  return `${(env['OTEL_EXPORTER_OTLP_ENDPOINT'] ?? '').trim().replace(/\/+$/, '')}/v1/traces`;
}

/** Options of `startTracing`. */
export interface StartTracingOptions {
  /**
   * Register an AsyncLocalStorage context manager, so `context.active()` follows awaits (default true: workers need
   * it, for user spans to nest under the handler span). The control plane passes false: its job spans carry their
   * contexts explicitly, and on Node 20 an AsyncLocalStorage in use (the batch processor's first export enters one)
   * puts a promise hook on every promise of the process, which cost about as much CPU per job as the spans (issue
   * #40: tracing at 10% sampling cost the same as at 100%).
   */
  activeContext?: boolean;
}

/**
 * Starts OpenTelemetry tracing when `tracingRequested(env)`: loads the SDK and the OTLP/HTTP exporter (JSON, or
 * protobuf with `OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf`: a third of the bytes, its package installed too),
 * registers them globally (W3C trace context, and with `activeContext` an AsyncLocalStorage context) and answers the
 * tracer Berth's job spans use; undefined otherwise, and nothing is loaded. `OTEL_SERVICE_NAME` (default
 * `serviceName`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_TRACES_SAMPLER` /
 * `OTEL_TRACES_SAMPLER_ARG` (head sampling) and `OTEL_BSP_*` apply as usual. Throws, naming the packages to install,
 * when they are missing. Called once per process (later calls answer the same tracer).
 *
 * @example const tracer = await startTracing('berth-server'); // undefined unless OTEL_EXPORTER_OTLP_ENDPOINT is set
 */
export async function startTracing(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
  options: StartTracingOptions = {},
): Promise<Tracer | undefined> {
  if (active) return active.tracer;
  if (!tracingRequested(env)) return undefined;
  const protobuf = tracesProtocol(env) === 'http/protobuf';
  const packages = protobuf
    ? [TRACING_PACKAGES[0], PROTOBUF_EXPORTER_PACKAGE, TRACING_PACKAGES[2]]
    : [...TRACING_PACKAGES];
  let mods: [
    typeof import('@opentelemetry/sdk-trace-node'),
    { OTLPTraceExporter: typeof import('@opentelemetry/exporter-trace-otlp-http').OTLPTraceExporter },
    typeof import('@opentelemetry/resources'),
  ];
  try {
    mods = await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      protobuf ? import('@opentelemetry/exporter-trace-otlp-proto') : import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  } catch (err) {
    throw new Error(
      `OTEL_EXPORTER_OTLP_ENDPOINT is set, but tracing needs packages that are not installed (${(err as Error).message}): npm install ${packages.join(' ')}`,
    );
  }
  const [node, otlp, resources] = mods;
  const resource = resources
    .resourceFromAttributes({ 'service.name': env['OTEL_SERVICE_NAME']?.trim() || serviceName })
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const exporter = new otlp.OTLPTraceExporter({ url: tracesUrl(env) });
  const provider = new node.NodeTracerProvider({
    resource,
    spanProcessors: [new node.BatchSpanProcessor(exporter)],
  });
  provider.register(options.activeContext === false ? { contextManager: null } : {});
  active = { tracer: trace.getTracer('berth'), stop: () => provider.shutdown() };
  return active.tracer;
}

/**
 * The tracer `startTracing` set up, or undefined (tracing off).
 *
 * @example const tracer = berthTracer(); if (tracer) tracer.startSpan('x').end();
 */
export function berthTracer(): Tracer | undefined {
  return active?.tracer;
}

/**
 * Exports the spans still buffered and stops tracing (before the process exits); nothing when it is off.
 *
 * @example await stopTracing();
 */
export async function stopTracing(): Promise<void> {
  const was = active;
  active = undefined;
  await was?.stop().catch(() => {});
}
