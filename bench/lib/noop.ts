/**
 * The worker logic every target runs, so only the path a job takes differs: an echo of the input, and a
 * generator yielding `chunks` small chunks, each stamped with the monotonic clock (ms, sub-ms precision) at which it
 * was produced so the client can measure the added latency per chunk. `gapMs > 0` paces the chunks.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export const echo = (input: unknown): unknown => input;

/**
 * Milliseconds on CLOCK_MONOTONIC (`process.hrtime`), one clock for every process on the machine, so a stamp
 * made in the worker compares with the client's. (`performance.timeOrigin + now()` differed between processes by
 * up to half a millisecond: some chunks arrived "before" they were made.)
 */
export const wallMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export interface StreamInput {
  chunks?: number;
  gapMs?: number;
  /** Wait this long before the first chunk (lets a reader connect first). */
  startMs?: number;
}

export interface StreamChunk {
  i: number;
  t: number;
}

export async function* chunks(input: StreamInput): AsyncGenerator<StreamChunk> {
  const n = input.chunks ?? 1000;
  const gap = input.gapMs ?? 0;
  if ((input.startMs ?? 0) > 0) await sleep(input.startMs);
  for (let i = 0; i < n; i++) {
    if (gap > 0 && i > 0) await sleep(gap);
    yield { i, t: wallMs() };
  }
}

/** Waits for the bench's `go` message when started held (`BENCH_HOLD=1`), so start-up is not timed as work. */
export async function released(): Promise<void> {
  if (process.env['BENCH_HOLD'] !== '1' || !process.send) return;
  process.send('held');
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
}
