/**
 * Big payloads: a 19 MiB `/runsync` (a JSON body whose `input.image` is a base64-like string, as an image sent
 * inline is) answered by the echo worker, one at a time and ten at once; and the longest event-loop stall of the
 * control plane while the ten are in flight (`monitorEventLoopDelay` in the server, through the preloaded probe).
 * A 503 `overloaded` (the server's in-flight body budget) is retried after its Retry-After, as a client would,
 * and counted.
 */
import { randomBytes } from 'node:crypto';
import { request } from '../lib/http.js';
import { cpuMs, rssBytes, sleep, stallStart, stallStop } from '../lib/proc.js';
import { percentile } from '../lib/stats.js';
import type { Running } from '../targets/types.js';
import type { BenchConfig, Figures } from './types.js';

/** Characters of `input.image`: the body is this plus about 40 bytes, under the 20 MiB `/runsync` limit. */
export const BIG_CHARS = 19 * 1024 * 1024;

let cached: { image: string; bodies: Buffer[] } | undefined;
/** Ten bodies (one per concurrent client, each with its own `n`), made once per bench process. */
function bodies(): { image: string; bodies: Buffer[] } {
  if (!cached) {
    const image = randomBytes((BIG_CHARS * 3) / 4).toString('base64');
    cached = {
      image,
      bodies: Array.from({ length: 10 }, (_, n) => Buffer.from(JSON.stringify({ input: { n, image } }))),
    };
  }
  return cached;
}

/** One big /runsync until answered (retrying 503 overloaded); resolves the retries it took. */
async function once(run: Running, n: number, retries: { count: number }): Promise<void> {
  const { image, bodies: all } = bodies();
  for (let attempt = 0; attempt < 60; attempt++) {
    const r = await request(`${run.base('echo')}/runsync?wait=300000`, 'POST', all[n], run.headers, 310_000);
    if (r.status === 503 && r.body?.code === 'overloaded') {
      retries.count++;
      await sleep(1000);
      continue;
    }
    if (r.status !== 200 || r.body?.status !== 'COMPLETED')
      throw new Error(`big /runsync: HTTP ${r.status} ${String(JSON.stringify(r.body)).slice(0, 200)}`);
    const out = r.body.output as { n?: number; image?: string } | undefined;
    if (out?.n !== n || out.image !== image) throw new Error(`big /runsync: wrong output for n=${n}`);
    return;
  }
  throw new Error('big /runsync: still overloaded after 60 retries');
}

/** Writes its figures into `f` as it goes: the single-request figure survives a failure of the ten at once. */
export async function big(run: Running, cfg: BenchConfig, f: Figures, name = ''): Promise<void> {
  const retries = { count: 0 };
  await once(run, 0, retries); // warm-up: the first one pays for compiling the paths
  const one: number[] = [];
  for (let i = 0; i < (cfg.bigOne ?? 2); i++) {
    const t0 = performance.now();
    await once(run, i % 10, retries);
    one.push(performance.now() - t0);
  }
  f['big_c1_ms'] = Math.min(...one);
  const server = run.serverProcs()[0]!;
  retries.count = 0;
  // A bystander: a small /runsync every 20 ms while the ten are in flight (issue #35), and the server's RSS.
  const bystander = await startBystander(run);
  const rss0 = rssBytes(server.pid);
  let rssMax = rss0;
  const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, rssBytes(server.pid))), 20);
  await stallStart(server);
  const t0 = performance.now();
  try {
    await Promise.all(Array.from({ length: 10 }, (_, n) => once(run, n, retries)));
  } finally {
    // The stall is the server's, measured whether or not all ten were answered correctly.
    f['big_c10_stall_ms'] = await stallStop(server);
    f['big_c10_retries'] = retries.count;
    clearInterval(rssTimer);
    const waits = await bystander.stop();
    f['big_bystander_p50_ms'] = percentile(waits, 50);
    f['big_bystander_p99_ms'] = percentile(waits, 99);
    f['big_bystander_max_ms'] = Math.max(...waits);
    f['big_c10_rss_growth_mb'] = (rssMax - rss0) / 1024 / 1024;
  }
  f['big_c10_ms'] = performance.now() - t0;
  // The bare echo parses the padding like any body (the figure issue #35 started from): measured on Berth rows.
  if (name.startsWith('berth')) await padding(run, server.pid, f);
}

/**
 * Small `/runsync` calls, one every 20 ms (each waits for its answer before the next may start late), to the
 * `stream` endpoint served by a worker of its own: a client of another endpoint, whom nothing of the ten should
 * delay. (The echo worker itself parses and serializes each 19 MiB value on its one thread, about 0.1-0.3 s each;
 * a small job queued behind those on the same worker waits for them whatever the control plane does.)
 */
async function startBystander(run: Running): Promise<{ stop(): Promise<number[]> }> {
  const worker = await run.startWorker('stream');
  await worker.go();
  const waits: number[] = [];
  let on = true;
  const body = Buffer.from('{"input":{"chunks":1}}');
  const loop = (async () => {
    while (on) {
      const t0 = performance.now();
      const r = await request(`${run.base('stream')}/runsync`, 'POST', body, run.headers, 60_000);
      if (r.status === 200) waits.push(performance.now() - t0);
      const left = 20 - (performance.now() - t0);
      if (left > 0) await sleep(left);
    }
  })();
  return {
    async stop() {
      on = false;
      await loop;
      await worker.stop();
      return waits.length > 0 ? waits : [Number.NaN];
    },
  };
}

/**
 * Three 19 MiB bodies whose bulk is outside `input` (`{"input":{},"pad":[{},{},...]}`) at once: each must be
 * refused (413 or 400), and the figure is the server's CPU per refused body.
 */
async function padding(run: Running, pid: number, f: Figures): Promise<void> {
  const body = Buffer.from(`{"input":{},"pad":[${'{},'.repeat(Math.floor(BIG_CHARS / 3) - 2)}{}]}`);
  const cpu0 = cpuMs(pid);
  const rss0 = rssBytes(pid);
  const answers = await Promise.all(
    [0, 1, 2].map(() => request(`${run.base('echo')}/runsync`, 'POST', body, run.headers, 60_000)),
  );
  f['big_pad_cpu_ms_each'] = (cpuMs(pid) - cpu0) / 3;
  f['big_pad_rss_growth_mb'] = (rssBytes(pid) - rss0) / 1024 / 1024;
  f['big_pad_refused'] = answers.filter((r) => r.status === 413 || r.status === 400).length;
}
