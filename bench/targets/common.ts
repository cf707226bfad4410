/** Pieces the target definitions share. */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request } from '../lib/http.js';
import { release, until, type Proc } from '../lib/proc.js';
import type { Worker } from './types.js';

/** Total size of the files under `dir` (recursively), bytes. */
export function dirBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return total;
}

/** /health of a RunPod-style endpoint: `{ jobs: { completed }, workers: { idle, running } }`. */
export async function health(
  base: string,
  headers: Record<string, string>,
): Promise<{ completed: number; workers: number }> {
  const r = await request(`${base}/health`, 'GET', undefined, headers);
  if (r.status !== 200) throw new Error(`GET ${base}/health: ${r.status} ${JSON.stringify(r.body)}`);
  const w = r.body.workers as Record<string, number>;
  return { completed: r.body.jobs.completed as number, workers: (w['idle'] ?? 0) + (w['running'] ?? 0) };
}

/** A held worker process that counts as connected once /health lists one more worker. */
export function healthWorker(proc: Proc, base: string, headers: Record<string, string>): Worker {
  return {
    proc,
    go: async () => {
      const before = (await health(base, headers)).workers;
      await release(proc);
      await until(async () => (await health(base, headers)).workers > before, 20_000, `a worker on ${base}`, 5);
    },
    stop: () => proc.kill(process.env['BENCH_CPU_PROF'] ? 'SIGTERM' : 'SIGKILL'),
  };
}
