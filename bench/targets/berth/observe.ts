/**
 * BENCH_OBSERVE=1 adds the rows of issue #29's table: `berth serve` SQLite (normal) with the logs a user gets by
 * default (level info, JSON lines, server and worker), with tracing off (`+logs`) and with tracing on exporting
 * over OTLP/HTTP to a local receiver (`+trace`, every job; `+trace10`, head sampling at 10%; bench/lib/otlp-sink.mjs),
 * against `berth-sqlite-normal` (`--log-level warn`, the quiet target) and `+logs` (the same logs, tracing off).
 * Goals in lib/observe-goals.ts.
 */
import { join } from 'node:path';
import { BENCH_DIR, freePort, start } from '../../lib/proc.js';
import type { Target } from '../types.js';
import { type BerthFlavour, withBaseline } from './index.js';

const sqlite = {
  args: (d: string) => ['--data-dir', d, '--log-level', 'info', '--log-format', 'json'],
  dataDir: (d: string) => d,
};
const infoWorker = { BERTH_LOG_LEVEL: 'info', BERTH_LOG_FORMAT: 'json' };

/** Starts a local OTLP/HTTP receiver and answers the environment that exports to it (and `extra`). */
function otlpSink(extra: Record<string, string> = {}) {
  return async () => {
    const port = await freePort();
    const sink = start(process.execPath, [join(BENCH_DIR, 'lib/otlp-sink.mjs'), String(port)]);
    await sink.waitFor(/otlp sink listening/);
    return {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, ...extra },
      stop: () => sink.kill('SIGTERM'),
    };
  };
}

const FLAVOURS: BerthFlavour[] = [
  {
    name: 'berth-sqlite-normal+logs',
    description: '`berth serve` SQLite (normal), logs at info as JSON lines (server and worker), tracing off',
    ...sqlite,
    workerEnv: infoWorker,
  },
  {
    name: 'berth-sqlite-normal+trace',
    description: 'the same with tracing on, every job: OTLP/HTTP JSON to a local receiver (server and worker)',
    ...sqlite,
    workerEnv: infoWorker,
    prepare: otlpSink(),
  },
  {
    name: 'berth-sqlite-normal+trace-proto',
    description: 'the same, every job, OTLP/HTTP protobuf (`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf`)',
    ...sqlite,
    workerEnv: infoWorker,
    prepare: otlpSink({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }),
  },
  {
    name: 'berth-sqlite-normal+trace10',
    description: 'the same, head sampling at 10% (`OTEL_TRACES_SAMPLER=parentbased_traceidratio`, arg 0.1)',
    ...sqlite,
    workerEnv: infoWorker,
    prepare: otlpSink({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' }),
  },
];

// BENCH_BERTH_BASELINE adds a `<name>@base` row after each of these too (as for the other Berth rows).
export const OBSERVE_TARGETS: Target[] = process.env['BENCH_OBSERVE'] === '1' ? FLAVOURS.flatMap(withBaseline) : [];
