import type { S3Config } from '@berth/protocol';
import type { Handler } from '../../handler.js';
import type { Logger } from '../../logger.js';
import { errorMessage } from '../execute/error-message.js';
import type { InputSchema } from '../execute/input-schema.js';
import { executeWithRetry, type RetryPolicy } from '../execute/retry.js';
import { LIMITS } from '@berth/protocol';
import type { RuntimeExit, WorkerRuntime } from '../runtime/runtime-types.js';
import { createWaiters, raceTimeout } from '../runtime/waiters.js';
import { PullClient, type PulledJob } from './pull-client.js';
import type { RunpodEnv } from './runpod-env.js';

export interface PullRuntimeOptions {
  handler: Handler;
  env: RunpodEnv;
  sdkVersion: string;
  concurrency: number;
  concurrencyModifier: ((current: number) => number) | undefined;
  returnAggregateStream: boolean;
  /** The handler streams: results are posted with `isStream=true`. */
  stream: boolean;
  drainTimeoutMs: number;
  inputSchema: InputSchema | undefined;
  retry: RetryPolicy;
  /** After the drain deadline aborts running jobs, how long to wait for their reports. */
  abortGraceMs: number;
  log: Logger;
}

interface Running {
  controller: AbortController;
  /** Reports of this job, sent one after the other (chunks in order, the result last). */
  chain: Promise<void>;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((r) => {
    const t = setTimeout(r, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
  });

/**
 * The worker runtime in RunPod mode (`RUNPOD_WEBHOOK_GET_JOB` set): takes jobs over RunPod's HTTP pull protocol
 * instead of Berth's WebSocket, with the same handler semantics. A take loop asks for as many jobs as there are
 * free slots (`job-take`, or `job-take-batch` above one), a stop loop long-polls `job-stop` and aborts the
 * named jobs (their handlers see `job.signal`; nothing is reported for them), a timer pings the running job ids.
 * SIGTERM: stop taking (the held take is dropped at once), finish running jobs until the drain timeout.
 */
export function createPullRuntime(o: PullRuntimeOptions): WorkerRuntime {
  const { log, env } = o;
  const client = new PullClient(env, o.sdkVersion);
  const running = new Map<string, Running>();
  /** Jobs whose result is still on its way: pings keep listing them (the control plane's lease). */
  const reporting = new Set<string>();
  const waiters = createWaiters();
  const takeAbort = new AbortController();
  const stopAbort = new AbortController();
  let concurrency = Math.max(1, o.concurrency);
  let connected = false;
  let draining = false;
  let stopped: RuntimeExit | undefined;
  let shutdownPromise: Promise<RuntimeExit> | undefined;
  let resolveDone!: (e: RuntimeExit) => void;
  const done = new Promise<RuntimeExit>((r) => (resolveDone = r));
  const outputTarget = { baseUrl: new URL(env.getJob).origin, token: env.token };

  async function takeLoop(): Promise<void> {
    let backoff = 250;
    while (!draining && !stopped) {
      if (running.size >= concurrency) {
        await waiters.until(() => draining || running.size < concurrency);
        continue;
      }
      const r = await client.take({
        batchSize: concurrency - running.size,
        inProgress: running.size > 0,
        signal: takeAbort.signal,
      });
      if (r.kind === 'jobs') for (const job of r.jobs) runJob(job);
      if (r.kind === 'error' && !draining) {
        log.warn('job-take failed; retrying', { error: r.error, inMs: backoff });
        await sleep(backoff, takeAbort.signal);
        backoff = Math.min(backoff * 2, 5000);
        continue;
      }
      connected = true;
      backoff = 250;
      if (r.kind === 'slow-down') await sleep(5000, takeAbort.signal);
    }
  }

  async function stopLoop(): Promise<void> {
    while (!stopped) {
      const t0 = performance.now();
      try {
        const { ids, slowDown } = await client.stops(stopAbort.signal);
        for (const id of ids) {
          const job = running.get(id);
          if (!job) continue;
          log.info('job stopped by the control plane', { job: id });
          job.controller.abort(new Error('stopped by the control plane'));
        }
        if (slowDown) await sleep(5000, stopAbort.signal);
        else if (ids.length === 0 && performance.now() - t0 < 1000) await sleep(1000, stopAbort.signal);
      } catch (err) {
        if (stopped) return;
        log.debug('job-stop failed; retrying in 1 s', { error: errorMessage(err) });
        await sleep(1000, stopAbort.signal);
      }
    }
  }

  function runJob(pulled: PulledJob): void {
    const { id } = pulled;
    const job: Running = { controller: new AbortController(), chain: Promise.resolve() };
    running.set(id, job);
    const jobLog = log.child({ jobId: id });
    const send = (what: string, fn: () => Promise<void>) => {
      job.chain = job.chain
        .then(fn)
        .catch((err: unknown) => jobLog.warn(`${what} not delivered`, { error: errorMessage(err) }));
    };
    jobLog.info('job received');
    const started = Date.now();
    void executeWithRetry(
      {
        handler: o.handler,
        job: {
          id,
          input: pulled.input,
          attempt: 1,
          ...(pulled.s3Config ? { s3Config: pulled.s3Config as S3Config } : {}),
          outputTarget,
        },
        signal: job.controller.signal,
        log: jobLog,
        returnAggregateStream: o.returnAggregateStream,
        inputSchema: o.inputSchema,
        onChunk: (chunk) => send('stream chunk', () => client.chunk(id, chunk)),
        onProgress: (value) =>
          send('progress', () => client.done(id, { status: 'IN_PROGRESS', output: value }, { isStream: false })),
      },
      o.retry,
    )
      .then(async (result) => {
        // A stopped job reports nothing: the control plane already decided its fate (as runpod-python does).
        if (result.status === 'COMPLETED')
          send('result', () => client.done(id, { output: result.output }, { isStream: o.stream }));
        else if (result.status === 'FAILED')
          send('result', () => client.done(id, { error: result.error }, { isStream: o.stream }));
        // The slot is free now: the next job-take goes out while the result is on its way.
        reporting.add(id);
        running.delete(id);
        modifyConcurrency();
        waiters.notify();
        await job.chain;
        jobLog.info(
          result.status === 'COMPLETED' ? 'job completed' : result.status === 'FAILED' ? 'job failed' : 'job aborted',
          { ms: Date.now() - started },
        );
      })
      .finally(() => {
        running.delete(id);
        reporting.delete(id);
        waiters.notify();
      });
  }

  function modifyConcurrency(): void {
    if (!o.concurrencyModifier) return;
    try {
      const next = o.concurrencyModifier(concurrency);
      if (Number.isInteger(next) && next >= 1 && next <= LIMITS.workerConcurrencyMax) concurrency = next;
    } catch (err) {
      log.error('concurrencyModifier threw; keeping the concurrency', { concurrency, error: errorMessage(err) });
    }
  }

  const ping = () =>
    void client
      .ping([...new Set([...running.keys(), ...reporting])])
      .catch((err: unknown) => log.debug('ping failed', { error: errorMessage(err) }));
  const pingTimer = setInterval(ping, env.pingIntervalMs);

  async function stop(exit: RuntimeExit): Promise<RuntimeExit> {
    if (stopped) return stopped;
    stopped = exit;
    draining = true;
    clearInterval(pingTimer);
    takeAbort.abort();
    stopAbort.abort();
    for (const job of running.values()) job.controller.abort(new Error('the worker stopped'));
    waiters.notify();
    resolveDone(exit);
    return exit;
  }

  async function drainAndStop(timeoutMs: number): Promise<RuntimeExit> {
    draining = true;
    takeAbort.abort();
    waiters.notify();
    log.info('draining: finishing running jobs before exit', { active: running.size, timeoutMs });
    await raceTimeout(
      waiters.until(() => running.size === 0 && reporting.size === 0),
      timeoutMs,
    );
    if (running.size > 0) {
      log.warn('drain deadline reached; aborting running jobs (the control plane requeues them)', {
        active: running.size,
      });
      for (const job of running.values()) job.controller.abort(new Error('the worker is shutting down'));
      await raceTimeout(
        waiters.until(() => running.size === 0 && reporting.size === 0),
        o.abortGraceMs,
      );
    }
    return stop({ code: 0, reason: 'drained' });
  }

  log.info('worker starting (RunPod worker protocol)', { workerId: env.workerId, concurrency, stream: o.stream });
  ping();
  void takeLoop();
  void stopLoop();

  return {
    workerId: env.workerId,
    done,
    get activeJobs() {
      return running.size;
    },
    get concurrency() {
      return concurrency;
    },
    get connected() {
      return connected && !stopped;
    },
    shutdown(opts = {}) {
      if (stopped) return Promise.resolve(stopped);
      shutdownPromise ??= drainAndStop(opts.timeoutMs ?? o.drainTimeoutMs);
      return shutdownPromise;
    },
    close: () => stop({ code: 0, reason: 'closed' }),
  };
}
