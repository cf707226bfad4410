import { startTracing } from '@berth/protocol/tracing';
import type { Io } from './io.js';
import { EXIT } from './usage-error.js';

/**
 * Starts OpenTelemetry tracing of the control plane when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set: `createServer` then picks the tracer up. No AsyncLocalStorage
 * context manager (the job spans carry their contexts; one in use costs a promise hook on every promise). Answers
 * an exit code after printing why when it cannot (the optional packages are missing), else undefined.
 */
export async function startServerTracing(io: Pick<Io, 'env' | 'stderr'>): Promise<number | undefined> {
  try {
    await startTracing('berth-server', io.env, { activeContext: false });
    return undefined;
  } catch (err) {
    io.stderr.write(`berth: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failure;
  }
}
