// L1, the design limit: HTTP -> in-memory FIFO -> WebSocket -> worker process -> HTTP reply, with no store, no
// validation, no auth. Same routes as Berth under /v2/<ep>/ (runsync, run, status/<id>, stream/<id> as SSE,
// health). Stream chunks are forwarded straight from the worker's socket to the SSE clients.
import http from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

type Status = 'IN_QUEUE' | 'IN_PROGRESS' | 'COMPLETED';
interface Job {
  id: string;
  ep: string;
  input: unknown;
  status: Status;
  output?: unknown;
  waiters: ((job: Job) => void)[];
  chunks: unknown[];
  sse: http.ServerResponse[];
}

const jobs = new Map<string, Job>();
/** One FIFO per endpoint: an array with a moving head, compacted now and then. */
const fifos = new Map<string, { items: Job[]; head: number }>();
const fifo = (ep: string) => fifos.get(ep) ?? fifos.set(ep, { items: [], head: 0 }).get(ep)!;
const completed = new Map<string, number>();
let next = 0;
interface Conn {
  ws: WebSocket;
  ep: string;
  free: number;
}
const workers: Conn[] = [];

function dispatch(): void {
  for (const w of workers) {
    const q = fifo(w.ep);
    while (w.free > 0 && q.head < q.items.length) {
      const job = q.items[q.head++]!;
      w.free--;
      job.status = 'IN_PROGRESS';
      w.ws.send(JSON.stringify({ id: job.id, input: job.input }));
    }
    if (q.head > 1024 && q.head * 2 > q.items.length) q.items.splice(0, q.head), (q.head = 0);
  }
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) }).end(s);
};
const view = (j: Job) => ({ id: j.id, status: j.status, ...(j.output !== undefined ? { output: j.output } : {}) });

const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on('end', () => {
    const [, v2, ep = '', route, id] = (req.url ?? '').split('?')[0]!.split('/');
    if (v2 !== 'v2') return json(res, 404, { error: 'not found' });
    if (req.method === 'POST' && (route === 'run' || route === 'runsync')) {
      const body = JSON.parse(Buffer.concat(parts).toString()) as { input: unknown };
      const job: Job = {
        id: `l1-${++next}`,
        ep,
        input: body.input,
        status: 'IN_QUEUE',
        waiters: [],
        chunks: [],
        sse: [],
      };
      jobs.set(job.id, job);
      fifo(ep).items.push(job);
      if (route === 'runsync') job.waiters.push((j) => json(res, 200, view(j)));
      dispatch();
      if (route === 'run') json(res, 200, { id: job.id, status: job.status });
      return;
    }
    const job = id ? jobs.get(id) : undefined;
    if (route === 'status') return job ? json(res, 200, view(job)) : json(res, 404, { error: 'not found' });
    if (route === 'stream' && job) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const c of job.chunks) res.write(`data: ${JSON.stringify({ output: c })}\n\n`);
      job.chunks = [];
      if (job.status === 'COMPLETED') return void res.end(`event: done\ndata: ${JSON.stringify(view(job))}\n\n`);
      job.sse.push(res);
      return;
    }
    if (route === 'health') {
      const idle = workers.filter((w) => w.ep === ep).length;
      return json(res, 200, {
        jobs: { completed: completed.get(ep) ?? 0, inQueue: fifo(ep).items.length - fifo(ep).head },
        workers: { idle, running: 0 },
      });
    }
    json(res, 404, { error: 'not found' });
  });
});
server.keepAliveTimeout = 60_000;

const wss = new WebSocketServer({ server, path: '/ws' });
wss.on('connection', (ws, req) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const conn: Conn = {
    ws,
    ep: url.searchParams.get('ep') ?? 'echo',
    free: Number(url.searchParams.get('concurrency') ?? 1),
  };
  workers.push(conn);
  ws.on('message', (data) => {
    const m = JSON.parse(String(data)) as { id: string; chunk?: unknown; done?: boolean; output?: unknown };
    const job = jobs.get(m.id);
    if (!job) return;
    if (m.chunk !== undefined) {
      if (job.sse.length === 0) job.chunks.push(m.chunk);
      else for (const r of job.sse) r.write(`data: ${JSON.stringify({ output: m.chunk })}\n\n`);
      return;
    }
    job.status = 'COMPLETED';
    job.output = m.output;
    conn.free++;
    completed.set(job.ep, (completed.get(job.ep) ?? 0) + 1);
    for (const w of job.waiters) w(job);
    job.waiters = [];
    for (const r of job.sse) r.end(`event: done\ndata: ${JSON.stringify(view(job))}\n\n`);
    job.sse = [];
    dispatch();
  });
  ws.on('close', () => workers.splice(workers.indexOf(conn), 1));
  dispatch();
});
server.listen(Number(process.env['PORT']), '127.0.0.1', () => process.stdout.write('listening\n'));
