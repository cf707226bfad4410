/**
 * The HTTP front of the PostgreSQL peers (pg-boss, graphile-worker): the same RunPod-style routes as the BullMQ
 * front (`/runsync`, `/run`, `/status/<id>`, `/health` under `/v2/<endpoint>/`), over a queue `adapter`.
 * `/runsync` waits for the job's completion notification (./done-listener.ts).
 */
import http from 'node:http';

export interface QueueAdapter {
  /** Queues a job and resolves its id. */
  submit(input: unknown): Promise<string>;
  /** Queues a job and resolves its id and output once it completed. */
  runsync(input: unknown): Promise<{ id: string; output: unknown }>;
  /** RunPod's status of the job, with its output once completed; undefined when unknown. */
  status(id: string): Promise<{ status: string; output?: unknown } | undefined>;
  /** Jobs completed so far (since this front started) and still queued. */
  counts(): Promise<{ completed: number; inQueue: number }>;
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) }).end(s);
};

async function route(q: QueueAdapter, req: http.IncomingMessage, body: string, res: http.ServerResponse) {
  const [, , , name, id] = (req.url ?? '').split('?')[0]!.split('/');
  if (req.method === 'POST' && (name === 'run' || name === 'runsync')) {
    const input = (JSON.parse(body) as { input: unknown }).input;
    if (name === 'run') return json(res, 200, { id: await q.submit(input), status: 'IN_QUEUE' });
    const done = await q.runsync(input);
    return json(res, 200, { id: done.id, status: 'COMPLETED', output: done.output });
  }
  if (name === 'status' && id) {
    const s = await q.status(id);
    return s ? json(res, 200, { id, ...s }) : json(res, 404, { error: 'not found' });
  }
  if (name === 'health') {
    const c = await q.counts();
    // Workers are not listed by these queues; the bench learns of its worker from the worker process itself.
    return json(res, 200, { jobs: c, workers: { idle: 0, running: 0 } });
  }
  json(res, 404, { error: 'not found' });
}

/** Serves the routes on PORT (127.0.0.1) and prints `listening`. */
export function serveFront(q: QueueAdapter): void {
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on(
      'end',
      () =>
        void route(q, req, Buffer.concat(parts).toString(), res).catch((err: Error) =>
          json(res, 500, { error: err.message }),
        ),
    );
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env['PORT']), '127.0.0.1', () => process.stdout.write('listening\n'));
}
