import { LIMITS, PROTOCOL_VERSION, type HelloMessage, type WelcomeMessage } from '@berth/protocol';
import { httpBaseOf } from '../execute/output-target.js';
import { toInputJsonSchema } from '../execute/input-schema.js';
import { LogShipper } from '../logs/log-shipper.js';
import { Connection, type JobControlMessage } from '../transport/connection.js';
import { SDK_VERSION } from '../transport/version.js';
import { Assignment } from './assignment.js';
import { cancelJob, dropStale } from './cancellation.js';
import { JobTable } from './job-table.js';
import { runAssignedJob } from './run-job.js';
import type { WorkerRuntime, WorkerRuntimeOptions } from './runtime-types.js';
import { ServerDrain } from './server-drain.js';
import { Shutdown } from './shutdown.js';

/**
 * Starts a worker runtime from resolved options (no environment): dials the control plane, runs assigned jobs
 * through a queue bounded by the concurrency, reports results, reconnects, drains. The parts live beside it: the
 * job table, assignment (queue and concurrency), running one job, cancellation, server drain, shutdown.
 *
 * @example
 * const resolved = resolveStartOptions({ handler }, process.env);
 * const rt = createWorkerRuntime({ ...resolved, ...resolved.connection!, log: createLogger() });
 * process.once('SIGTERM', () => void rt.shutdown());
 * const { code } = await rt.done;
 */
export function createWorkerRuntime(options: WorkerRuntimeOptions): WorkerRuntime {
  const { workerId, stream } = options;
  const log = options.log.child({ workerId, endpointId: options.endpointId });
  const table = new JobTable();
  /** The connected server acknowledges results (welcome.acks). */
  let serverAcks = false;
  /** The connected server keeps big values as blobs (welcome.blobs). */
  let serverBlobs = false;
  const shipper = new LogShipper((msg) => conn.ready && conn.send(msg));
  const inputJsonSchema = options.inputSchema ? toInputJsonSchema(options.inputSchema, log) : undefined;
  const send = (msg: Parameters<Connection['send']>[0]): boolean => conn.send(msg);

  const conn: Connection = new Connection({
    url: options.url,
    token: options.token,
    log,
    backoff: options.timings.reconnect,
    handshakeTimeoutMs: options.timings.handshakeTimeoutMs,
    hello: (): HelloMessage => ({
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      workerId,
      endpointId: options.endpointId,
      concurrency: Math.max(1, assignment.concurrency),
      stream,
      inflight: table.refs(LIMITS.workerInflightMax),
      sdkVersion: SDK_VERSION,
      blobs: true,
      ...(inputJsonSchema ? { inputSchema: inputJsonSchema } : {}),
      ...(options.batcher ? { batch: { maxSize: options.batcher.options.maxSize } } : {}),
    }),
    onWelcome,
    onMessage,
    onFatal: (code, message) => {
      log.error(`stopping: ${message}`, { code });
      void shutdown.stop({ code: 1, reason: message }, { hard: true });
    },
  });
  const serverDrain = new ServerDrain({
    log,
    activeJobs: () => table.active,
    recycle: (reason) => conn.recycle(reason),
  });
  const shutdown: Shutdown = new Shutdown({
    table,
    log,
    send,
    closeConnection: (o) => conn.close(o),
    endServerDrain: () => serverDrain.end({ recycle: false }),
    clearQueue: () => assignment.clear(),
    drainTimeoutMs: options.drainTimeoutMs,
    abortGraceMs: options.timings.abortGraceMs,
  });
  const runDeps = {
    options,
    shipper,
    outputTarget: { baseUrl: httpBaseOf(options.url), token: options.token },
    serverBlobs: () => serverBlobs,
  };
  const assignment: Assignment = new Assignment({
    table,
    log,
    send,
    serverAcks: () => serverAcks,
    concurrency: options.concurrency,
    concurrencyModifier: options.concurrencyModifier,
    run: (entry) => runAssignedJob(entry, runDeps),
    afterJob: () => serverDrain.jobFinished(),
    isStopped: () => shutdown.stopped,
    isDraining: () => shutdown.draining,
  });

  function onWelcome(welcome: WelcomeMessage): void {
    serverDrain.end({ recycle: false });
    serverAcks = welcome.acks;
    serverBlobs = welcome.blobs;
    dropStale(table, welcome.stale);
    if (assignment.concurrency === 0) conn.send({ type: 'concurrency', concurrency: 0 });
    if (shutdown.draining) conn.send({ type: 'draining' });
    for (const entry of table.values()) {
      if (serverAcks) entry.resendResult();
      entry.flush();
    }
    shipper.flush();
    table.sweep();
  }

  function onMessage(msg: JobControlMessage): void {
    if (msg.type === 'job.assign') assignment.assign(msg);
    else if (msg.type === 'job.ack') {
      const entry = table.get(msg);
      if (entry) {
        entry.ack();
        table.sweep(entry);
      }
    } else if (msg.type === 'job.cancel') cancelJob(table, msg, send);
    else if (!shutdown.draining && !shutdown.stopped) serverDrain.begin(msg.deadline);
  }

  // Batch sizes feed the control plane's berth_batch_size histogram; one lost while disconnected is not resent.
  if (options.batcher) options.batcher.onBatch = (size) => void (conn.ready && conn.send({ type: 'batch', size }));
  // The logger already carries workerId and endpointId (bound fields).
  log.info('worker starting', {
    ...(options.name !== undefined ? { name: options.name } : {}),
    concurrency: options.concurrency,
    stream,
    ...(options.batcher ? { batch: options.batcher.options } : {}),
    sdkVersion: SDK_VERSION,
  });
  conn.start();

  return {
    workerId,
    done: shutdown.done,
    get activeJobs() {
      return table.active;
    },
    get concurrency() {
      return assignment.concurrency;
    },
    get connected() {
      return conn.ready;
    },
    shutdown: (opts) => shutdown.shutdown(opts),
    close: () => shutdown.stop({ code: 0, reason: 'closed' }, { hard: true }),
  };
}
