import type { Job } from './handler.js';

/**
 * `StartOptions.batch`: run the handler once per batch of jobs instead of once per job (docs/batching.md).
 *
 * @example start({ batch: { maxSize: 16, maxWaitMs: 10 }, handler: async (jobs) => model.run(jobs.map((j) => j.input)) })
 */
export interface BatchOptions {
  /**
   * Most jobs in one handler call (1-1024). Also the worker's default `concurrency`; a set `concurrency` must be at
   * least this. Env `BERTH_BATCH_MAX_SIZE` overrides it.
   */
  maxSize: number;
  /**
   * Under load (the previous batch held more than one job, or jobs arrived while it ran), how long a batch waits
   * after its first job for more to join, in ms (0-60000); a full batch starts at once. An idle worker never waits:
   * a lone job starts at once. Default `10`. Env `BERTH_BATCH_MAX_WAIT_MS` overrides it.
   */
  maxWaitMs?: number;
}

/** One chunk a streaming batch handler yields: `chunk` goes to the stream of `jobs[index]`. */
export interface BatchChunk {
  index: number;
  chunk: unknown;
}

/**
 * The outputs of a batch, one per job and in the order of `jobs`. An `Error` in a slot fails that job alone (with
 * `retry`, only that job is tried again, in a later batch; an `UnrecoverableError` is never retried).
 */
export type BatchOutputs<O = unknown> = readonly (O | Error)[];

/**
 * What a batch handler may return: the outputs (or a promise of them), or for a streaming batch handler an
 * iterator / async iterable of `BatchChunk`s whose return value, if any, is the outputs (without one, each job's
 * output follows the streaming rules: its list of chunks).
 */
export type BatchHandlerResult<O = unknown> =
  | BatchOutputs<O>
  | PromiseLike<BatchOutputs<O>>
  // biome-ignore lint/suspicious/noConfusingVoidType: a generator without `return` is typed Generator<T, void>
  | Iterator<BatchChunk, BatchOutputs<O> | void>
  // biome-ignore lint/suspicious/noConfusingVoidType: as above, for async generators
  | AsyncIterator<BatchChunk, BatchOutputs<O> | void>
  | AsyncIterable<BatchChunk>;

/**
 * A batch handler: called with up to `batch.maxSize` jobs, returns one output per job. Each job keeps its own
 * `signal` (a cancelled or timed-out job's signal fires; its slot's output is then ignored), `progress()`, `log` and
 * `attempt`; inputs are already checked against `inputSchema` (a job whose input is refused fails before it joins a
 * batch). Throwing fails every job of the batch.
 *
 * @example
 * const upscale: BatchHandler<{ image: string }> = async (jobs) => {
 *   const images = await model.run(jobs.map((j) => j.input.image));
 *   return images.map((image) => ({ image }));
 * };
 * const tokens: BatchHandler<{ prompt: string }> = async function* (jobs) {
 *   for (const [index, job] of jobs.entries()) yield { index, chunk: job.input.prompt };
 * };
 */
export type BatchHandler<I = any, O = unknown> = (jobs: Job<I>[]) => BatchHandlerResult<O>;
