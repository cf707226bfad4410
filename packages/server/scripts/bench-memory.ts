// Memory under large bodies and frames (issue #16 item 9), measured in one run against two control planes in
// child processes: "unbounded" (no body budget, 64 MB worker frames: the limits before) and "bounded" (the
// defaults: 100 MB of bodies in flight, 24 MB worker frames). For each:
//   1. ten concurrent 20 MB POST /runsync bodies: statuses, baseline and peak RSS of the control plane (VmHWM);
//   2. one 60 MB worker frame (a job.complete): accepted or refused, longest event-loop stall meanwhile.
// A worker in this process completes every job with a small output, so the figures are the input path's.
//
// Run: node --import tsx packages/server/scripts/bench-memory.ts
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PROTOCOL_VERSION, WORKER_WS_PATH } from '@berth/protocol';
import WebSocket from 'ws';

const KEY = 'bench-key';
const TOKEN = 'bench-token';
const MB = 1024 * 1024;

async function child(unbounded: boolean): Promise<void> {
  const { createServer } = await import('../src/server.js');
  const { silentLogger } = await import('@berth/protocol/log');
  const server = createServer({
    apiKeys: [KEY],
    workerTokens: [TOKEN],
    endpoints: ['echo'],
    logger: silentLogger,
    rateLimits: { enabled: false },
    ...(unbounded ? { maxBodyBytesInFlight: Number.MAX_SAFE_INTEGER, maxWorkerFrameBytes: 64 * MB } : {}),
  });
  const { port } = await server.listen({ port: 0 });
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;
  console.log(JSON.stringify({ port }));
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'reset') {
      globalThis.gc?.();
      writeFileSync('/proc/self/clear_refs', '5'); // resets VmHWM to the current RSS
      lag.reset();
    }
    console.log(JSON.stringify({ rss: process.memoryUsage().rss, hwm: hwm(), lagMaxMs: lag.max / 1e6 }));
  }
}

interface Stats {
  rss: number;
  hwm: number;
  lagMaxMs: number;
}

async function parent(): Promise<void> {
  console.log(
    `load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const rows: string[] = [];
  for (const mode of ['unbounded', 'bounded'] as const) rows.push(...(await measure(mode)));
  console.log(rows.join('\n'));
  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

async function measure(mode: 'unbounded' | 'bounded'): Promise<string[]> {
  const proc = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child', mode],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: proc.stdout! })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value as string);
  const stats = async (cmd: 'reset' | 'stats'): Promise<Stats> => {
    proc.stdin!.write(`${cmd}\n`);
    return next();
  };
  const { port } = await next();
  const worker = await connectWorker(port);
  try {
    await stats('reset');
    const base = await stats('stats');
    const body = Buffer.from(`{"input":{"data":"${'x'.repeat(20 * MB - 64)}"}}`);
    const statuses = await Promise.all(
      Array.from({ length: 10 }, () => post(port, '/v2/echo/runsync?wait=60000', body)),
    );
    const peak = await stats('stats');
    const counts = statuses.reduce<Record<number, number>>((m, s) => ((m[s] = (m[s] ?? 0) + 1), m), {});
    const out = [
      `${mode.padEnd(9)} 10 x 20 MB /runsync: statuses ${JSON.stringify(counts)}, RSS ${mb(base.rss)} -> peak ${mb(peak.hwm)} (+${mb(peak.hwm - base.rss)}), loop stall max ${peak.lagMaxMs.toFixed(0)} ms`,
    ];

    // One 60 MB worker frame: a job.complete whose output is 60 MB.
    worker.autoComplete = false;
    const pending = post(port, '/v2/echo/run', Buffer.from('{"input":{}}'));
    const assign = await worker.nextAssign();
    await pending;
    await stats('reset');
    const frameBase = await stats('stats');
    worker.ws.send(
      JSON.stringify({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output: 'y'.repeat(60 * MB) }),
    );
    const outcome = await Promise.race([
      worker.acked(assign.id).then(() => 'accepted (acknowledged)'),
      worker.closed.then((c) => `refused: connection closed ${c}`),
    ]);
    await new Promise((r) => setTimeout(r, 200));
    const after = await stats('stats');
    out.push(
      `${mode.padEnd(9)} one 60 MB worker frame: ${outcome}, RSS ${mb(frameBase.rss)} -> peak ${mb(after.hwm)}, loop stall max ${after.lagMaxMs.toFixed(0)} ms`,
    );
    return out;
  } finally {
    worker.ws.terminate();
    proc.kill('SIGKILL');
  }
}

function mb(n: number): string {
  return `${Math.round(n / MB)} MB`;
}

function post(port: number, path: string, body: Buffer): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(-1));
    req.end(body);
  });
}

async function connectWorker(port: number) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}${WORKER_WS_PATH}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    maxPayload: 256 * MB,
  });
  await new Promise((r) => ws.once('open', r));
  const assigns: { id: string; attempt: number }[] = [];
  const acks = new Set<string>();
  let wake = () => {};
  const w = {
    ws,
    autoComplete: true,
    closed: new Promise<number>((r) => ws.once('close', (code) => r(code))),
    async nextAssign() {
      while (assigns.length === 0) await new Promise<void>((r) => (wake = r));
      return assigns.shift()!;
    },
    async acked(id: string) {
      while (!acks.has(id)) await new Promise<void>((r) => (wake = r));
    },
  };
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { type: string; id: string; attempt: number };
    if (msg.type === 'job.assign') {
      if (w.autoComplete)
        ws.send(JSON.stringify({ type: 'job.complete', id: msg.id, attempt: msg.attempt, output: { ok: true } }));
      else assigns.push({ id: msg.id, attempt: msg.attempt });
    }
    if (msg.type === 'job.ack') acks.add(msg.id);
    wake();
  });
  ws.send(
    JSON.stringify({
      type: 'hello',
      protocol: PROTOCOL_VERSION,
      workerId: 'bench-w',
      endpointId: 'echo',
      concurrency: 16,
      stream: false,
      inflight: [],
    }),
  );
  return w;
}

if (process.argv[2] === '--child') await child(process.argv[3] === 'unbounded');
else await parent();
