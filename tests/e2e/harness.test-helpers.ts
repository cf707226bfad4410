import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HealthReply } from '@berth/protocol';

/** Absolute path of the repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The built binary the tests run (`npm run build` first). */
export const BIN = join(REPO_ROOT, 'packages/cli/dist/bin.js');
/** The examples the tests drive. */
/**
 * The port in the ready line of `berth serve` or `berth dev` (`berth ready at http://127.0.0.1:<port> (endpoints:
 * …)`), once that line is printed whole; undefined before. For servers started with `--port 0`.
 */
export function readyPort(text: string): number | undefined {
  const m = /berth ready at http:\/\/[^:\s]+:(\d+) /.exec(text);
  return m ? Number(m[1]) : undefined;
}

export const BASIC_CONFIG = join(REPO_ROOT, 'examples/basic/berth.config.json');
export const BASIC_ENDPOINTS = ['echo', 'stream', 'sleep', 'fail'] as const;

export interface StartBerthOptions {
  /** Config file (default: examples/basic/berth.config.json). */
  config?: string;
  /** Extra arguments after `dev --config <file> --port 0`. */
  args?: string[];
  /** Extra environment for `berth dev` (and through it, the workers). */
  env?: Record<string, string>;
  /** How long to wait for the `ready` line. Default 30 s; 0: do not wait (for runs expected to fail). */
  readyTimeoutMs?: number;
  /** Endpoints whose workers must be connected before this resolves (polls /health). Default: none. */
  waitForWorkers?: readonly string[];
  /** Start it as the README does, `npm start -- <args>` (build, then examples/basic), instead of the binary. */
  npmStart?: boolean;
  /** The API key (BERTH_API_KEY). Default: a random one. */
  apiKey?: string;
}

interface Line {
  stream: 'stdout' | 'stderr';
  text: string;
  at: number;
}

const live = new Set<ChildProcess>();
// Last resort if a test runner dies without running afterAll: never leave process groups behind.
process.once('exit', () => {
  for (const child of live) killGroup(child, 'SIGKILL');
});

/** `berth dev` running as a real process in its own process group (so cleanup reaches its workers too). */
export class BerthDev implements AsyncDisposable {
  readonly child: ChildProcess;
  readonly apiKey: string;
  readonly workerToken: string;
  /** Wall time from spawn to the `ready` line, ms. */
  startupMs = 0;
  url = '';
  readonly lines: Line[] = [];
  readonly #exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #listeners = new Set<() => void>();
  #signalled = false;

  constructor(child: ChildProcess, apiKey: string, workerToken: string) {
    this.child = child;
    this.apiKey = apiKey;
    this.workerToken = workerToken;
    this.#exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
    void this.#exited.then(() => live.delete(child));
    for (const name of ['stdout', 'stderr'] as const) {
      let partial = '';
      child[name]?.setEncoding('utf8').on('data', (data: string) => {
        const parts = (partial + data).split('\n');
        partial = parts.pop() ?? '';
        for (const text of parts) this.lines.push({ stream: name, text, at: Date.now() });
        for (const l of this.#listeners) l();
      });
    }
  }

  /** Everything printed so far (stdout and stderr interleaved by arrival). */
  get output(): string {
    return this.lines.map((l) => l.text).join('\n');
  }

  /** The last `n` lines, for failure messages. */
  tail(n = 40): string {
    return this.lines
      .slice(-n)
      .map((l) => `  ${l.stream === 'stderr' ? '!' : ' '} ${l.text}`)
      .join('\n');
  }

  /** Waits until a line (after index `from`) matches `re`. */
  waitForLine(re: RegExp, timeoutMs: number, from = 0): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      let index = from;
      const check = () => {
        for (; index < this.lines.length; index++) {
          const m = this.lines[index]?.text.match(re);
          if (m) return done(() => resolve(m));
        }
        if (this.child.exitCode !== null || this.child.signalCode !== null) {
          done(() =>
            reject(
              new Error(
                `berth dev exited (${this.child.exitCode ?? this.child.signalCode}) before printing ${re}\n${this.tail()}`,
              ),
            ),
          );
        }
      };
      const timer = setTimeout(
        () => done(() => reject(new Error(`no line matching ${re} within ${timeoutMs} ms\n${this.tail()}`))),
        timeoutMs,
      );
      const done = (f: () => void) => {
        clearTimeout(timer);
        this.#listeners.delete(check);
        this.child.off('close', check);
        f();
      };
      this.#listeners.add(check);
      this.child.on('close', check);
      check();
    });
  }

  /** Pid of a worker (its latest start), from the supervisor's `[<endpoint>/<workerId>] worker started (pid N)` lines. */
  workerPid(workerId: string): number | undefined {
    let pid: number | undefined;
    for (const l of this.lines) {
      const m = l.text.match(/^\[([^/\]]+)\/([^\]]+)\] worker started \(pid (\d+)\)/);
      if (m && m[2] === workerId) pid = Number(m[3]);
    }
    return pid;
  }

  /** fetch against the control plane; adds `Authorization: Bearer <apiKey>` unless `auth: false`. */
  fetch(path: string, init: RequestInit & { auth?: boolean } = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (init.auth !== false && !headers.has('authorization')) headers.set('authorization', `Bearer ${this.apiKey}`);
    if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    const { auth: _auth, ...rest } = init;
    return fetch(this.url + path, { ...rest, headers, signal: init.signal ?? AbortSignal.timeout(60_000) });
  }

  /** `fetch` plus JSON body. */
  async json<T = any>(
    path: string,
    init: RequestInit & { auth?: boolean } = {},
  ): Promise<{ status: number; body: T; headers: Headers }> {
    const res = await this.fetch(path, init);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // leave the text
    }
    return { status: res.status, body: body as T, headers: res.headers };
  }

  /** POST a JSON body. */
  post<T = any>(path: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }> {
    return this.json<T>(path, { method: 'POST', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  }

  /** Waits until every named endpoint has at least one connected, non-initializing worker. */
  async waitForWorkers(endpoints: readonly string[], timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (const ep of endpoints) {
      for (;;) {
        const { status, body } = await this.json<HealthReply>(`/v2/${ep}/health`);
        const w = body?.workers;
        if (status === 200 && w && w.idle + w.running > 0) break;
        if (Date.now() > deadline)
          throw new Error(
            `workers of ${ep} not connected within ${timeoutMs} ms: ${JSON.stringify(body)}\n${this.tail()}`,
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  /** Waits for `berth dev` to exit on its own; throws after `timeoutMs`. */
  async exited(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(
          () => reject(new Error(`berth dev still running after ${timeoutMs} ms\n${this.tail()}`)),
          timeoutMs,
        )),
    );
    try {
      return await Promise.race([this.#exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends `signal` to `berth dev` and waits for it to exit; SIGKILLs the whole group after `timeoutMs`. */
  async stop(
    signal: NodeJS.Signals = 'SIGTERM',
    timeoutMs = 20_000,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    // One signal only: a second SIGINT/SIGTERM makes `berth dev` kill everything at once (exit 130).
    if (!this.#signalled && this.child.exitCode === null && this.child.signalCode === null) {
      this.#signalled = true;
      this.child.kill(signal);
    }
    const timer = setTimeout(() => killGroup(this.child, 'SIGKILL'), timeoutMs);
    const result = await this.#exited;
    clearTimeout(timer);
    return result;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
    // Anything the group still holds (a worker that outlived berth dev) goes too.
    killGroup(this.child, 'SIGKILL');
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

/**
 * Starts `node packages/cli/dist/bin.js dev --config <config> --port 0` with a known API key and worker token,
 * waits for the `ready` line and parses the URL from it.
 *
 * @example
 * await using berth = await startBerthDev({ waitForWorkers: ['echo'] });
 * const { body } = await berth.post('/v2/echo/runsync', { input: { a: 1 } });
 */
export async function startBerthDev(options: StartBerthOptions = {}): Promise<BerthDev> {
  if (!existsSync(BIN)) throw new Error(`${BIN} does not exist: run \`npm run build\` at the repository root first`);
  const apiKey = options.apiKey ?? `berth_e2e_${Math.random().toString(36).slice(2)}`;
  const workerToken = `berthw_e2e_${Math.random().toString(36).slice(2)}`;
  const started = Date.now();
  const rest = [
    '--port',
    '0',
    ...(options.args?.some((a) => a === '--store' || a === '--data-dir') ? [] : ['--store', 'memory']),
    ...(options.args ?? []),
  ];
  const [cmd, args] = options.npmStart
    ? ['npm', ['start', '--', ...rest]]
    : [process.execPath, [BIN, 'dev', '--config', options.config ?? BASIC_CONFIG, ...rest]];
  const child = spawn(cmd, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, BERTH_API_KEY: apiKey, BERTH_WORKER_TOKEN: workerToken, NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  live.add(child);
  const berth = new BerthDev(child, apiKey, workerToken);
  if (options.readyTimeoutMs === 0) return berth;
  try {
    const m = await berth.waitForLine(/\bready\b.*?(https?:\/\/[^\s)]+)/, options.readyTimeoutMs ?? 30_000);
    berth.startupMs = Date.now() - started;
    berth.url = (m[1] ?? '').replace(/\/$/, '');
    if (options.waitForWorkers?.length)
      await berth.waitForWorkers(options.waitForWorkers, Math.max(30_000, options.readyTimeoutMs ?? 0));
  } catch (err) {
    await berth[Symbol.asyncDispose]();
    throw err;
  }
  return berth;
}

/** Polls `fn` until `done(value)` holds; throws with the last value after `timeoutMs`. */
export async function pollUntil<T>(
  fn: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (done(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(v)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Whether a process exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
