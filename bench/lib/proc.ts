/** Child processes for the bench: spawn and track them, read CPU time and RSS from /proc, free ports. */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BENCH_DIR = fileURLToPath(new URL('../', import.meta.url));
const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

export interface Proc {
  child: ChildProcess;
  pid: number;
  /** Everything it wrote to stdout and stderr. */
  output: () => string;
  /** Resolves once its output matches `re` (rejects if it exits first or after `timeoutMs`). */
  waitFor: (re: RegExp, timeoutMs?: number) => Promise<void>;
  /** Resolves on the first IPC message `held` (a worker started with BENCH_HOLD=1 waiting for `go`). */
  held: Promise<void>;
  /** SIGKILL (or `signal`) and wait for the exit. */
  kill: (signal?: NodeJS.Signals) => Promise<void>;
}

/** Spawns a tracked process (killed when the bench exits); `ipc` adds an IPC channel. */
export function start(cmd: string, args: string[], opts: SpawnOptions & { ipc?: boolean } = {}): Proc {
  const { ipc, ...rest } = opts;
  const child = spawn(cmd, args, {
    cwd: REPO_ROOT,
    stdio: ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
    ...rest,
  });
  if (child.pid === undefined) throw new Error(`could not start ${cmd}`);
  live.add(child);
  const out: string[] = [];
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out.push(d.toString());
    if (out.length > 2000) out.splice(0, out.length - 1000);
    for (const l of listeners) l();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<void>((r) => child.once('exit', () => (live.delete(child), r())));
  const output = () => out.join('');
  const held = new Promise<void>((r) => child.on('message', (m) => m === 'held' && r()));
  return {
    child,
    held,
    pid: child.pid,
    output,
    waitFor: (re, timeoutMs = 20_000) =>
      new Promise<void>((resolve, reject) => {
        const done = (err?: Error) => {
          listeners.delete(check);
          clearTimeout(timer);
          err ? reject(err) : resolve();
        };
        const check = () => re.test(output()) && done();
        const timer = setTimeout(
          () => done(new Error(`${cmd} ${args.join(' ')}: no ${re} in ${timeoutMs} ms:\n${output().slice(-2000)}`)),
          timeoutMs,
        );
        listeners.add(check);
        void exited.then(() =>
          done(
            new Error(
              `${cmd} ${args.join(' ')} exited (${child.exitCode ?? child.signalCode}) before ${re}:\n${output().slice(-2000)}`,
            ),
          ),
        );
        check();
      }),
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** `node --import tsx <script>` with the given environment. */
export function startTs(
  script: string,
  env: Record<string, string>,
  opts: { ipc?: boolean; nodeArgs?: string[] } = {},
): Proc {
  return start(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', script], {
    env: { ...process.env, ...env },
    ipc: opts.ipc ?? false,
  });
}

/** utime + stime of a process in ms (0 once it is gone). */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS; // fields 14 and 15 of stat(5)
  } catch {
    return 0;
  }
}

export const totalCpuMs = (pids: readonly number[]): number => pids.reduce((s, p) => s + cpuMs(p), 0);

/** Resident set size in bytes (VmRSS), NaN once it is gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** Sends `message` to a process started with bench/lib/heap-probe.mjs and resolves its answer's `key`. */
function ask(p: Proc, message: string, key: string, timeoutMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the probe did not answer '${message}'`)), timeoutMs);
    const on = (m: Record<string, number>) => {
      if (typeof m !== 'object' || m === null || !(key in m)) return;
      p.child.off('message', on);
      clearTimeout(timer);
      resolve(Number(m[key]));
    };
    p.child.on('message', on);
    p.child.send(message);
  });
}

/** Asks a process started with bench/lib/heap-probe.mjs for its heap after a full GC. */
export const heapUsed = (p: Proc, timeoutMs = 10_000): Promise<number> => ask(p, 'heap', 'heapUsed', timeoutMs);

/** CPU time (ms, user + system, µs resolution) of a process started with the probe (`/proc` counts 10 ms ticks). */
export const cpuUsageMs = (p: Proc): Promise<number> => ask(p, 'cpu', 'cpuMs');

/** Starts measuring the longest event-loop stall in a process started with the probe; resolves once it has. */
export const stallStart = async (p: Proc): Promise<void> => void (await ask(p, 'stall-start', 'stallStarted'));

/** The longest event-loop stall (ms) since `stallStart`. */
export const stallStop = (p: Proc): Promise<number> => ask(p, 'stall-stop', 'stallMs');

/** Tells a held worker (BENCH_HOLD=1) to start, once it has said it is held. */
export async function release(p: Proc): Promise<void> {
  await p.held;
  p.child.send('go');
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `fn` until it returns true, every `everyMs`, for at most `timeoutMs`. */
export async function until(fn: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 10): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
