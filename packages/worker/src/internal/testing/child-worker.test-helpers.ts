/**
 * A worker entry script for the child-process tests (`node --import tsx child-worker.test-helpers.ts`).
 * `FIXTURE_HANDLER` picks the handler: echo (default), stubborn (ignores its AbortSignal), fail.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { start, type Handler, type Job } from '../../index.js';

type Input = { sleepMs?: number };

const handlers: Record<string, Handler<Input>> = {
  async echo(job: Job<Input>) {
    if (job.input.sleepMs) await sleep(job.input.sleepMs, undefined, { signal: job.signal });
    return { echo: job.input };
  },
  async stubborn(job: Job<Input>) {
    await sleep(job.input.sleepMs ?? 60_000);
    return 'ignored the abort';
  },
  fail() {
    throw new Error('fixture failure');
  },
};

const handler = handlers[process.env.FIXTURE_HANDLER ?? 'echo'];
if (!handler) throw new Error(`unknown FIXTURE_HANDLER ${process.env.FIXTURE_HANDLER}`);
start({ handler, concurrency: 1 });
