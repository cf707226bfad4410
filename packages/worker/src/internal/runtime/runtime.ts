import PQueue from 'p-queue';
import { PROTOCOL_VERSION, type AssignMessage, type CancelMessage, type HelloMessage, type WelcomeMessage } from '@berth/protocol';
import { createLogger } from '../../logger.js';
import { Connection, type JobControlMessage } from '../transport/connection.js';
import { errorMessage } from '../execute/error-message.js';
import { executeJob } from '../execute/execute.js';
import { isStreamingHandler } from '../execute/handler-kind.js';
import { JobEntry, jobKey } from './job-entry.js';
import { httpBaseOf, type OutputTarget } from '../execute/output-target.js';
import { SDK_VERSION } from '../transport/version.js';
import { defaultWorkerId } from '../transport/worker-id.js';
import { createWaiters, raceTimeout } from './waiters.js';
import { LogShipper } from '../logs/log-shipper.js';
import { withConsoleForwarding } from '../logs/console-capture.js';
import { toInputJsonSchema } from '../execute/input-schema.js';
import type { RuntimeExit, WorkerRuntime, WorkerRuntimeOptions } from './runtime-types.js';

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Starts a worker runtime with explicit options (no environment): dials the control plane, runs assigned jobs
 * through a p-queue bounded by the concurrency, reports results, reconnects, drains.
 *
 * @example
 * const rt = createWorkerRuntime({ handler, url: 'ws://127.0.0.1:8080/v2/_worker/ws', endpointId: 'echo', token });
 * process.once('SIGTERM', () => void rt.shutdown());
 * const { code } = await rt.done;
 */
export function createWorkerRuntime(options: WorkerRuntimeOptions): WorkerRuntime {
  const { handler } = options;
  const workerId = options.workerId ?? defaultWorkerId();
  const log = (options.log ?? createLogger()).child({ worker: workerId });
  const returnAggregateStream = options.returnAggregateStream ?? false;
  const stream = options.stream ?? (returnAggregateStream || isStreamingHandler(handler));
  const drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
  const abortGraceMs = options.abortGraceMs ?? 2_000;
  let concurrency = options.concurrency ?? 1;
  const outputTarget: OutputTarget = { baseUrl: httpBaseOf(options.url), token: options.token };
  const queue = new PQueue({ concurrency: Math.max(1, concurrency) });
  const entries = new Map<string, JobEntry>();
  const waiters = createWaiters();
  let draining = false;
  /** The connected server acknowledges results (welcome.acks). */
  let serverAcks = false;
  let serverDraining = false;
  let serverDrainTimer: NodeJS.Timeout | undefined;
  let shutdownPromise: Promise<RuntimeExit> | undefined;
  let forceShutdown: (() => void) | undefined;
  let stopped: RuntimeExit | undefined;
  let resolveDone!: (exit: RuntimeExit) => void;
  const done = new Promise<RuntimeExit>((resolve) => (resolveDone = resolve));

  const activeCount = (): number => [...entries.values()].filter((e) => e.state !== 'finished').length;
  const transport = (msg: Parameters<Connection['send']>[0]): boolean => conn.send(msg);
  const forwardLogs = options.forwardLogs ?? true;
  const shipper = new LogShipper((msg) => conn.ready && conn.send(msg));
  const inputJsonSchema = options.inputSchema ? toInputJsonSchema(options.inputSchema, log) : undefined;

  const conn: Connection = new Connection({
    url: options.url,
    token: options.token,
    log,
    backoff: options.reconnect ?? { initialMs: 250, maxMs: 5_000 },
    handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
    hello: (): HelloMessage => ({
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      workerId,
      endpointId: options.endpointId,
      concurrency: Math.min(1024, Math.max(1, concurrency)),
      stream,
      inflight: [...entries.values()].slice(0, 1024).map((e) => e.ref),
      sdkVersion: SDK_VERSION,
      ...(inputJsonSchema ? { inputSchema: inputJsonSchema } : {}),
    }),
    onWelcome,
    onMessage,
    onFatal: (code, message) => {
      log.error(`stopping: ${message}`, { code });
      void stop({ code: 1, reason: message }, true);
    },
  });

  function onWelcome(welcome: WelcomeMessage): void {
    endServerDrain(false);
    serverAcks = welcome.acks;
    for (const ref of welcome.stale) {
      const entry = entries.get(jobKey(ref.id, ref.attempt));
      if (!entry) continue;
      if (entry.state === 'finished' && !entry.hasUnsent) {
        entry.ack(); // its result was sent: stored before the reconnect, or no longer wanted
        continue;
      }
      entry.log.info('the control plane no longer runs this attempt; dropping it', { attempt: ref.attempt });
      entry.cancel('stale: the control plane no longer runs this attempt');
    }
    if (concurrency === 0) conn.send({ type: 'concurrency', concurrency: 0 });
    if (draining) conn.send({ type: 'draining' });
    for (const entry of entries.values()) {
      if (serverAcks) entry.resendResult();
      entry.flush();
    }
    shipper.flush();
    sweep();
  }

  function onMessage(msg: JobControlMessage): void {
    if (msg.type === 'job.assign') assign(msg);
    else if (msg.type === 'job.ack') {
      entries.get(jobKey(msg.id, msg.attempt))?.ack();
      sweep();
    } else if (msg.type === 'job.cancel') cancel(msg);
    else onServerDrain(msg.deadline);
  }

  function assign(msg: AssignMessage): void {
    if (stopped) return;
    const key = jobKey(msg.id, msg.attempt);
    if (entries.has(key)) {
      log.warn('ignored a duplicate job.assign', { job: msg.id, attempt: msg.attempt });
      return;
    }
    for (const other of entries.values()) {
      if (other.spec.id === msg.id && other.spec.attempt < msg.attempt) other.cancel(`superseded by attempt ${msg.attempt}`);
    }
    const entry = new JobEntry(msg, transport, log.child({ job: msg.id }), () => serverAcks);
    entries.set(key, entry);
    entry.log.info('job received', { attempt: msg.attempt });
    queue.add(() => run(entry)).catch((err: unknown) => entry.log.error('runtime error', { error: errorMessage(err) }));
  }

  function cancel(msg: CancelMessage): void {
    const reason = `cancelled by the control plane (${msg.reason})`;
    const entry = entries.get(jobKey(msg.id, msg.attempt));
    if (!entry) {
      // Unknown or already reported: release the credit in case the server still counts it.
      conn.send({ type: 'job.fail', id: msg.id, attempt: msg.attempt, error: reason, aborted: true });
      return;
    }
    entry.log.info('job cancelled', { reason: msg.reason });
    entry.cancel(reason);
    sweep();
  }

  async function run(entry: JobEntry): Promise<void> {
    if (entry.state !== 'queued') return;
    entry.state = 'running';
    const started = Date.now();
    const { id, attempt } = entry.spec;
    // The handler's lines (and a failure's stack) are stored with the job; the runtime's own lifecycle lines
    // (received, completed) stay local: the job object already has those times, and each would cost a write.
    const handlerLog = forwardLogs ? shipper.wrap(entry.log, id, attempt) : entry.log;
    const execute = () =>
      executeJob({
        handler,
        job: { ...entry.spec, outputTarget },
        signal: entry.controller.signal,
        log: handlerLog,
        returnAggregateStream,
        inputSchema: options.inputSchema,
        onChunk: (chunk, index) => entry.chunk(chunk, index),
        onProgress: (value) => entry.progress(value),
      });
    const result = await (forwardLogs ? withConsoleForwarding((level, message) => shipper.add(id, attempt, level, message), execute) : execute());
    shipper.flush(); // what the handler logged reaches the control plane before its result
    if (result.status === 'COMPLETED') entry.complete(result.output);
    else entry.fail(result.error, result.status === 'CANCELLED');
    const ms = Date.now() - started;
    if (result.status === 'FAILED') entry.log.warn('job failed', { ms, error: result.error });
    else entry.log.info(result.status === 'COMPLETED' ? 'job completed' : 'job aborted', { ms });
    sweep();
    modifyConcurrency();
    if (serverDraining && activeCount() === 0) endServerDrain(true);
  }

  function sweep(): void {
    for (const [key, entry] of entries) if (entry.delivered) entries.delete(key);
    waiters.notify();
  }

  function modifyConcurrency(): void {
    const modifier = options.concurrencyModifier;
    if (!modifier || stopped) return;
    let next: unknown;
    try {
      next = modifier(concurrency);
    } catch (err) {
      log.error('concurrencyModifier threw; keeping the concurrency', { concurrency, error: errorMessage(err) });
      return;
    }
    if (typeof next !== 'number' || !Number.isInteger(next) || next < 0 || next > 1024) {
      log.warn('concurrencyModifier must return a whole number from 0 to 1024; keeping the concurrency', { returned: String(next), concurrency });
      return;
    }
    if (next === concurrency) return;
    log.info('concurrency changed', { from: concurrency, to: next });
    concurrency = next;
    queue.concurrency = Math.max(1, next);
    if (!draining) conn.send({ type: 'concurrency', concurrency: next });
  }

  function onServerDrain(deadline: number): void {
    if (draining || stopped) return;
    serverDraining = true;
    log.info('the control plane is draining; finishing running jobs, then reconnecting', { active: activeCount(), deadline: new Date(deadline).toISOString() });
    clearTimeout(serverDrainTimer);
    serverDrainTimer = setTimeout(() => endServerDrain(true), Math.min(MAX_TIMER_MS, Math.max(0, deadline - Date.now())));
    if (activeCount() === 0) endServerDrain(true);
  }

  /** Ends a server drain; with `recycle`, closes the socket so the worker reconnects (jobs keep running). */
  function endServerDrain(recycle: boolean): void {
    clearTimeout(serverDrainTimer);
    serverDrainTimer = undefined;
    if (!serverDraining) return;
    serverDraining = false;
    if (recycle) conn.recycle('control plane draining');
  }

  async function drainAndStop(timeoutMs: number): Promise<RuntimeExit> {
    draining = true;
    endServerDrain(false);
    const forced = new Promise<void>((resolve) => (forceShutdown = resolve));
    conn.send({ type: 'draining' });
    log.info('draining: finishing running jobs before exit', { active: activeCount(), timeoutMs });
    await raceTimeout(Promise.race([waiters.until(() => activeCount() === 0), forced]), timeoutMs);
    if (activeCount() > 0) {
      // Handed back at once (requeued by the control plane), not after the handlers return: the platform's
      // SIGKILL may be close. Handlers see their AbortSignal; the process exits once the results are acked.
      log.warn('drain deadline reached; handing running jobs back to the queue', { active: activeCount() });
      for (const entry of entries.values()) if (entry.state !== 'finished') entry.abandon('the worker is shutting down');
      sweep();
    }
    await raceTimeout(waiters.until(() => entries.size === 0), abortGraceMs);
    if (entries.size > 0) log.warn('exiting with job results the control plane did not receive', { jobs: entries.size });
    return stop({ code: 0, reason: 'drained' }, false);
  }

  async function stop(exit: RuntimeExit, hard: boolean): Promise<RuntimeExit> {
    if (stopped) return stopped;
    stopped = exit;
    clearTimeout(serverDrainTimer);
    queue.clear();
    for (const entry of entries.values()) if (!entry.controller.signal.aborted) entry.controller.abort(new Error('the worker stopped'));
    await conn.close({ hard });
    waiters.clear();
    resolveDone(exit);
    return exit;
  }

  log.info('worker starting', { ...(options.name !== undefined ? { name: options.name } : {}), endpointId: options.endpointId, concurrency, stream, sdkVersion: SDK_VERSION });
  conn.start();

  return {
    workerId,
    done,
    get activeJobs() {
      return activeCount();
    },
    get concurrency() {
      return concurrency;
    },
    get connected() {
      return conn.ready;
    },
    shutdown(opts = {}) {
      if (stopped) return Promise.resolve(stopped);
      if (shutdownPromise) {
        forceShutdown?.();
        return shutdownPromise;
      }
      shutdownPromise = drainAndStop(opts.timeoutMs ?? drainTimeoutMs);
      return shutdownPromise;
    },
    close: () => stop({ code: 0, reason: 'closed' }, true),
  };
}
