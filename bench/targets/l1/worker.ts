// The L1 worker process: takes jobs over one WebSocket, runs the same no-op logic as every target (echo, or the
// chunk generator on the `stream` endpoint), sends chunks and the result back.
import { WebSocket } from 'ws';
import { chunks, echo, released, type StreamInput } from '../../lib/noop.js';

await released();
const ep = process.env['BENCH_ENDPOINT'] ?? 'echo';
const ws = new WebSocket(
  `${process.env['BENCH_URL']!.replace('http', 'ws')}/ws?ep=${ep}&concurrency=${process.env['BENCH_CONCURRENCY'] ?? '64'}`,
);
ws.on('message', (data) => void onMessage(data));

async function onMessage(data: unknown): Promise<void> {
  const job = JSON.parse(String(data)) as { id: string; input: unknown };
  if (ep === 'stream') {
    for await (const c of chunks(job.input as StreamInput)) ws.send(JSON.stringify({ id: job.id, chunk: c }));
    ws.send(JSON.stringify({ id: job.id, output: null }));
  } else {
    ws.send(JSON.stringify({ id: job.id, output: echo(job.input) }));
  }
}
ws.on('close', () => process.exit(0));
ws.on('error', (err) => {
  process.stderr.write(`l1 worker: ${err.message}\n`);
  process.exit(1);
});
