/**
 * Streaming: one job whose generator yields `streamChunks` chunks 1 ms apart, read over SSE (/stream/<id> with
 * Accept: text/event-stream): latency per chunk from the worker's clock stamp to the client; then one job
 * yielding `burstChunks` back to back: chunks per second at the client.
 */
import { request, sse } from '../lib/http.js';
import { wallMs, type StreamChunk } from '../lib/noop.js';
import { percentile } from '../lib/stats.js';
import type { Running } from '../targets/types.js';
import type { BenchConfig, Figures } from './types.js';

async function oneJob(run: Running, chunks: number, gapMs: number): Promise<{ lat: number[]; perSecond: number }> {
  const base = run.base('stream');
  // startMs: the generator waits before its first chunk, so the SSE reader is connected before chunks flow.
  const r = await request(`${base}/run`, 'POST', { input: { chunks, gapMs, startMs: 150 } }, run.headers);
  if (r.status !== 200) throw new Error(`stream /run: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  const lat: number[] = [];
  const seen: number[] = [];
  let first = NaN; // when the first chunk was produced (worker clock)
  let last = NaN;
  let done = false;
  let bad: string | undefined;
  await sse(`${base}/stream/${r.body.id}`, run.headers, (event, data) => {
    if (event === 'done') return void (done = true);
    if (event !== 'message') return void (bad ??= `unexpected event ${event}: ${data.slice(0, 200)}`);
    const now = wallMs();
    const c = (JSON.parse(data) as { output: StreamChunk }).output;
    lat.push(now - c.t);
    seen.push(c.i);
    if (Number.isNaN(first)) first = c.t;
    last = now;
  });
  if (bad) throw new Error(`stream: ${bad}`);
  if (!done) throw new Error('stream: the SSE response ended without a done event');
  if (seen.length !== chunks || seen.some((i, k) => i !== k))
    throw new Error(`stream: got ${seen.length}/${chunks} chunks, or out of order`);
  // From the first chunk produced to the last one received: the whole pipe, including any batching.
  return { lat, perSecond: chunks / ((last - first) / 1000) };
}

export async function stream(run: Running, cfg: BenchConfig): Promise<Figures> {
  const worker = await run.startWorker('stream');
  await worker.go();
  try {
    const paced = await oneJob(run, cfg.streamChunks, 1);
    const burst = await oneJob(run, cfg.burstChunks ?? cfg.streamChunks, 0);
    return {
      stream_chunk_p50_ms: percentile(paced.lat, 50),
      stream_chunk_p99_ms: percentile(paced.lat, 99),
      stream_chunks_per_s: burst.perSecond,
    };
  } finally {
    await worker.stop();
  }
}
