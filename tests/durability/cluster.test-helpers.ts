import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, existsSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { BIN, REPO_ROOT, readyPort } from '../e2e/harness.test-helpers.js';

export const RECORDING_WORKER = fileURLToPath(new URL('./recording-worker.test-helpers.ts', import.meta.url));
export const API_KEY = 'berth_durability_key';
export const WORKER_TOKEN = 'berthw_durability_token';
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live)
    if (c.pid && c.exitCode === null)
      try {
        process.kill(-c.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
});

/** A free loopback port (the control plane is restarted on the same one, so workers find it again). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function track(child: ChildProcess, sink: string[]): ChildProcess {
  live.add(child);
  child.stdout?.on('data', (d: Buffer) => sink.push(d.toString()));
  child.stderr?.on('data', (d: Buffer) => sink.push(d.toString()));
  child.once('exit', () => live.delete(child));
  return child;
}

/** One `berth serve` process on a fixed port and data dir. */
export class ServeProcess {
  readonly output: string[] = [];
  constructor(readonly child: ChildProcess) {
    track(child, this.output);
  }
  get text(): string {
    return this.output.join('');
  }
  /** The port it listens on, read from its ready line (so `startServe(0, …)` lets the OS pick one). */
  get port(): number {
    const port = readyPort(this.text);
    if (port === undefined) throw new Error(`berth serve has not printed its ready line:\n${this.text}`);
    return port;
  }
  async ready(timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!/berth ready[\s\S]*Press Ctrl-C to stop/.test(this.text)) {
      if (this.child.exitCode !== null)
        throw new Error(`berth serve exited with ${this.child.exitCode}:\n${this.text}`);
      if (Date.now() > deadline) throw new Error(`berth serve not ready in ${timeoutMs} ms:\n${this.text}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  exited(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve(this.child.exitCode);
    return new Promise((r) => this.child.once('exit', (code) => r(code)));
  }
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    if (this.child.pid && this.child.exitCode === null) this.child.kill(signal);
    return this.exited();
  }
}

/**
 * Starts `berth serve --port <port> --data-dir <dir>` (SQLite) with known credentials; waits for `ready`.
 * Pass 0 for a first start: the server binds a port the OS picks and `serve.port` reads it back. A port taken from
 * `freePort()` and bound later can be taken in between by another test file's process (seen in CI); restarts reuse
 * `serve.port`.
 */
export async function startServe(port: number, dataDir: string, args: string[] = []): Promise<ServeProcess> {
  if (!existsSync(BIN)) throw new Error(`${BIN} does not exist: run \`npm run build\` first`);
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--port', String(port), '--data-dir', dataDir, '--endpoint', 'rec', ...args],
    {
      cwd: REPO_ROOT,
      // Rate limits off: the checker's clients poll every acknowledged job, far above the per-key status limit.
      env: {
        ...process.env,
        BERTH_API_KEY: API_KEY,
        BERTH_WORKER_TOKEN: WORKER_TOKEN,
        NO_COLOR: '1',
        BERTH_LOG_LEVEL: 'warn',
        BERTH_RATE_LIMITS: 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const serve = new ServeProcess(child);
  await serve.ready();
  return serve;
}

/** A real worker process running the recording handler against `url`. */
export function startRecordingWorker(
  url: string,
  workerId: string,
  execLog: string,
  env: Record<string, string> = {},
): { child: ChildProcess; output: string[] } {
  const output: string[] = [];
  const child = spawn(process.execPath, ['--import', 'tsx', RECORDING_WORKER], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      BERTH_URL: url,
      BERTH_ENDPOINT_ID: 'rec',
      BERTH_WORKER_TOKEN: WORKER_TOKEN,
      BERTH_WORKER_ID: workerId,
      BERTH_LOG_LEVEL: 'warn',
      EXEC_LOG: execLog,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child, output);
  return { child, output };
}

/** Kills every process these helpers started and waits for them. */
export async function killAll(): Promise<void> {
  const waits = [...live].map(
    (c) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r()))),
  );
  for (const c of live) c.kill('SIGKILL');
  await Promise.all(waits);
}

/** Executions per job id from the recording workers' log. */
export function executions(execLog: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(execLog)) return counts;
  for (const line of readFileSync(execLog, 'utf8').split('\n')) {
    const id = line.split(' ')[0];
    if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/**
 * The checker's verdict: the final state of every acknowledged job, polled on any live control plane (replica)
 * until none is queued or running (bounded), with executions counted from the workers' log. A 503 (replica going
 * down, database unreachable) or a refused connection is asked again; any status but 200, 404 and 503 fails it.
 */
export async function classify(bases: () => string[], acked: string[], execLog: string, timeoutMs: number) {
  const final = new Map<string, string>();
  const deadline = Date.now() + timeoutMs;
  let pending = [...acked];
  let i = 0;
  while (pending.length > 0 && Date.now() < deadline) {
    const next: string[] = [];
    for (const id of pending) {
      const live = bases();
      let r: { status: number; json: Record<string, unknown> };
      try {
        r = await api(live[i++ % live.length]!, 'GET', `/v2/rec/status/${id}`);
      } catch {
        next.push(id);
        continue;
      }
      if (r.status === 503) {
        next.push(id);
        continue;
      }
      if (r.status !== 200 && r.status !== 404)
        throw new Error(`status answered ${r.status}: ${JSON.stringify(r.json)}`);
      const status = r.status === 404 ? 'LOST' : String(r.json['status']);
      final.set(id, status);
      if (status === 'IN_QUEUE' || status === 'IN_PROGRESS') next.push(id);
    }
    pending = next;
    if (pending.length) await new Promise((r) => setTimeout(r, 250));
  }
  const execs = executions(execLog);
  const count = (s: string) => [...final.values()].filter((v) => v === s).length;
  return {
    acknowledged: acked.length,
    completed: count('COMPLETED'),
    lost: count('LOST'),
    failed: count('FAILED'),
    stillPending: pending.length,
    duplicated: acked.filter((id) => (execs.get(id) ?? 0) > 1).length,
    neverRan: acked.filter((id) => !execs.has(id)).length,
  };
}
