// The peer: an HTTP front over BullMQ + Redis with the same routes as Berth. /runsync adds the job and waits for
// it with job.waitUntilFinished() on ONE shared QueueEvents listener (BullMQ's documented way).
import http from 'node:http';
import { Queue, QueueEvents } from 'bullmq';

const connection = { host: '127.0.0.1', port: Number(process.env['REDIS_PORT']) };
const queue = new Queue('echo', { connection });
const events = new QueueEvents('echo', { connection });
await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  const s = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) }).end(s);
};
const STATE: Record<string, string> = {
  waiting: 'IN_QUEUE',
  delayed: 'IN_QUEUE',
  prioritized: 'IN_QUEUE',
  active: 'IN_PROGRESS',
  completed: 'COMPLETED',
  failed: 'FAILED',
};

async function route(req: http.IncomingMessage, body: string, res: http.ServerResponse): Promise<void> {
  const [, , , name, id] = (req.url ?? '').split('?')[0]!.split('/');
  if (req.method === 'POST' && (name === 'run' || name === 'runsync')) {
    const job = await queue.add('echo', { input: (JSON.parse(body) as { input: unknown }).input });
    if (name === 'run') return json(res, 200, { id: job.id, status: 'IN_QUEUE' });
    const output = await job.waitUntilFinished(events, 60_000);
    return json(res, 200, { id: job.id, status: 'COMPLETED', output });
  }
  if (name === 'status' && id) {
    const job = await queue.getJob(id);
    if (!job) return json(res, 404, { error: 'not found' });
    const state = await job.getState();
    return json(res, 200, {
      id,
      status: STATE[state] ?? state,
      ...(state === 'completed' ? { output: job.returnvalue } : {}),
    });
  }
  if (name === 'health') {
    const c = await queue.getJobCounts('completed', 'waiting', 'active');
    const workers = (await queue.getWorkers()).length;
    return json(res, 200, {
      jobs: { completed: c['completed'], inQueue: c['waiting'] },
      workers: { idle: workers, running: 0 },
    });
  }
  json(res, 404, { error: 'not found' });
}

const server = http.createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (d: Buffer) => parts.push(d));
  req.on(
    'end',
    () =>
      void route(req, Buffer.concat(parts).toString(), res).catch((err: Error) =>
        json(res, 500, { error: err.message }),
      ),
  );
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env['PORT']), '127.0.0.1', () => process.stdout.write('listening\n'));
