/**
 * A fake model for overhead benchmarks (`scripts/overhead.ts`): its "forward pass" is a busy loop of a fixed number
 * of iterations per token (or per scored text), calibrated in the bench process to a known CPU time (e.g. 2 ms), so
 * what Berth adds per token and per job can be told apart from a model's cost. The CPU the loop itself took is
 * counted (`process.cpuUsage` around it, the thread being blocked meanwhile), and a worker writes the running total
 * to `BERTH_FAKE_STATS` when the bench asks (`reportBurntOnSignal`): the bench subtracts each side's own measured loop cost, so the loop's
 * run-to-run noise does not land in the difference.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as turn } from 'node:timers/promises';
import type { BatchHandler, Job } from '@berth/worker';
import type { GenerateRequest, GenerateResult } from '../src/engine/batch-engine.js';
import type { TextEngine } from '../src/text-model.js';

/** CPU (µs) the busy loop has taken in this process, and the tokens or texts it stood for. */
export const burnt = { us: 0, units: 0 };

let sink = 0;
/** Busy loop pieces: a small function called many times is compiled the same way whatever `burn` is asked for. */
const PIECE = 10_000;
function spin(n: number, x: number): number {
  let y = x;
  for (let i = 0; i < n; i++) y = (Math.imul(y, 1103515245) + 12345 + i) | 0;
  return y;
}

/** `iterations` rounds of integer arithmetic the JIT cannot drop; counts its own CPU into `burnt`. */
export function burn(iterations: number, units: number): void {
  const c0 = process.cpuUsage();
  let x = sink | 1;
  for (let done = 0; done < iterations; done += PIECE) x = spin(Math.min(PIECE, iterations - done), x);
  sink = x;
  const d = process.cpuUsage(c0);
  burnt.us += d.user + d.system;
  burnt.units += units;
}

/** Runs the loop long enough for the JIT to compile it (a worker does this before its first job, as `calibrate`
 * does in the bench process), and forgets that CPU. */
export function warmUp(): void {
  burn(5e7, 0);
  burnt.us = 0;
  burnt.units = 0;
}

/** Iterations of `burn` that take `targetUs` of CPU on this machine now (the median of five measurements). */
export function calibrate(targetUs: number): number {
  warmUp();
  const probe = 5e6;
  const rates: number[] = [];
  for (let i = 0; i < 5; i++) {
    const before = burnt.us;
    burn(probe, 0);
    rates.push(probe / Math.max(1, burnt.us - before));
  }
  burnt.us = 0;
  burnt.units = 0;
  return Math.max(1, Math.round(targetUs * rates.sort((a, b) => a - b)[2]!));
}

/**
 * A worker's side channel to the bench: on SIGUSR2, writes `burnt` to `<BERTH_FAKE_STATS>/<name>.json` (when that is
 * set). On a signal, not after every job, so the writes cost nothing in the bench's measured windows.
 */
export function reportBurntOnSignal(name: string): void {
  const dir = process.env['BERTH_FAKE_STATS'];
  if (dir) process.on('SIGUSR2', () => writeFileSync(join(dir, `${name}.json`), JSON.stringify(burnt)));
}

/** Reads the iterations per token (or text) from `BERTH_FAKE_ITERS`, as the bench set it, and warms the loop up. */
export function itersFromEnv(): number {
  const n = Number(process.env['BERTH_FAKE_ITERS']);
  if (!Number.isInteger(n) || n < 1) throw new Error('BERTH_FAKE_ITERS must be a positive integer (the bench sets it)');
  warmUp();
  return n;
}

interface Seq {
  req: GenerateRequest;
  made: number;
  resolve(r: GenerateResult): void;
}

/**
 * The text engine's interface over the busy loop: every step is one "forward pass" over the sequences running
 * (`iterations` per sequence), each gets one token (`" tok"`), and the loop yields to the event loop between steps,
 * as the real engine does while onnxruntime runs. Sequences join at the next step (continuous batching).
 */
export class FakeEngine implements TextEngine {
  private readonly running: Seq[] = [];
  private stepping = false;

  constructor(private readonly iterations: number) {}

  get load(): number {
    return this.running.length;
  }

  generate(req: GenerateRequest): Promise<GenerateResult> {
    return new Promise((resolve) => {
      this.running.push({ req, made: 0, resolve });
      if (!this.stepping) void this.loop();
    });
  }

  private async loop(): Promise<void> {
    this.stepping = true;
    while (this.running.length) {
      burn(this.iterations * this.running.length, this.running.length);
      for (const s of [...this.running]) {
        s.made++;
        s.req.onDelta?.(' tok');
        const cancelled = s.req.signal?.aborted ?? false;
        if (s.made >= s.req.maxTokens || cancelled) {
          this.running.splice(this.running.indexOf(s), 1);
          s.resolve({
            text: ' tok'.repeat(s.made),
            finishReason: cancelled ? 'cancelled' : 'length',
            promptTokens: s.req.promptIds.length,
            completionTokens: s.made,
          });
        }
      }
      await turn();
    }
    this.stepping = false;
  }
}

/** A batch handler whose forward pass costs `iterations` per job of the batch; each job answers `{n, tokens: 1}`. */
export function fakeScoreHandler(iterations: number): BatchHandler<{ text?: unknown }> {
  return async (jobs: Job<{ text?: unknown }>[]) => {
    burn(iterations * jobs.length, jobs.length);
    return jobs.map((j) => ({ tokens: 1, text_length: typeof j.input.text === 'string' ? j.input.text.length : 0 }));
  };
}
