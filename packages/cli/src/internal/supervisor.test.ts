import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '@berth/protocol/log';
import { WorkerSupervisor, type WorkerSpec } from './supervisor.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-supervisor-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function setup(files: Record<string, string>, restart = {}) {
  const specs: WorkerSpec[] = Object.entries(files).map(([name, code], i) => {
    const file = join(tmp, `${name}.ts`);
    writeFileSync(file, code);
    return {
      endpointId: name,
      workerId: `${name}-${i + 1}`,
      file,
      cwd: tmp,
      env: { ...process.env, HELLO: 'from-env' },
    };
  });
  const out = new PassThrough();
  const err = new PassThrough();
  const text = { out: '', err: '', log: [] as string[] };
  out.on('data', (d: Buffer) => (text.out += d.toString()));
  err.on('data', (d: Buffer) => (text.err += d.toString()));
  const logger = createLogger({ level: 'debug', sink: (r) => text.log.push(r.msg) });
  const gaveUp: string[] = [];
  const sup = new WorkerSupervisor(specs, {
    loaderUrl: import.meta.resolve('tsx'),
    stdout: out,
    stderr: err,
    logger,
    color: false,
    restart: { baseDelayMs: 20, maxDelayMs: 50, ...restart },
    onGiveUp: (s) => gaveUp.push(s.workerId),
  });
  return { sup, text, gaveUp };
}

const until = async (cond: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('WorkerSupervisor', () => {
  it('runs TypeScript workers with the env and cwd given, prefixing stdout and stderr lines', async () => {
    const { sup, text } = setup({
      hello: `const n: number = 1;\nconsole.log('out', n, process.env.HELLO, process.cwd());\nconsole.error('err line');\nsetInterval(() => {}, 1000);\n`,
    });
    sup.start();
    await until(() => text.out.includes('out 1') && text.err.includes('err line'));
    expect(text.out).toMatch(/^\[hello\/hello-1\] worker started \(pid \d+\)$/m);
    expect(text.out).toContain(`[hello/hello-1] out 1 from-env ${tmp}\n`);
    expect(text.err).toContain('[hello/hello-1] err line\n');
    expect(sup.pids().get('hello-1')).toEqual(expect.any(Number));
    await sup.stop(2_000);
    expect(sup.pids().size).toBe(0);
    expect(text.out).toContain('[hello/hello-1] worker stopped');
  });

  it('restarts a crashed worker, then gives up after repeated immediate crashes', async () => {
    const { sup, text, gaveUp } = setup(
      { crash: `console.log('starting');\nprocess.exit(3);\n` },
      { maxImmediateCrashes: 3 },
    );
    sup.start();
    await until(() => gaveUp.length === 1);
    expect(gaveUp).toEqual(['crash-1']);
    expect(text.out.match(/worker started/g)).toHaveLength(3);
    expect(text.log.filter((l) => /exited with code 3 .*restarting in/.test(l))).toHaveLength(2);
    expect(text.log.at(-1)).toMatch(/crashed 3 times in a row within 5 s of starting, so berth is giving up on it/);
    await sup.stop(1_000);
  });

  it('startState: starting until connected; a crash loop from the second quick crash in a row (wait reasons, issue #38)', async () => {
    const { sup, text } = setup(
      { loop: `setTimeout(() => process.exit(3), 100);\n`, steady: `setInterval(() => {}, 1000);\n` },
      { maxImmediateCrashes: 10 },
    );
    sup.start();
    expect(sup.startState('loop')).toEqual({ starting: true, crashLoop: false });
    expect(sup.startState('steady')).toEqual({ starting: true, crashLoop: false });
    await until(() => text.out.includes('[steady/steady-2] worker started'));
    sup.markConnected('steady-2');
    expect(sup.startState('steady')).toEqual({ starting: false, crashLoop: false });
    await until(() => text.log.filter((l) => /loop-1 exited with code 3/.test(l)).length === 1);
    expect(sup.startState('loop').crashLoop).toBe(false);
    await until(() => text.log.filter((l) => /loop-1 exited with code 3/.test(l)).length === 2);
    expect(sup.startState('loop')).toEqual({ starting: true, crashLoop: true });
    await sup.stop(1_000);
  });

  it('a worker that ignores SIGTERM is killed after the timeout', async () => {
    const { sup, text } = setup({
      stubborn: `process.on('SIGTERM', () => console.log('ignoring SIGTERM'));\nconsole.log('up');\nsetInterval(() => {}, 1000);\n`,
    });
    sup.start();
    await until(() => text.out.includes('up'));
    const t0 = Date.now();
    await sup.stop(300);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(text.out).toContain('ignoring SIGTERM');
    expect(text.log.some((l) => /did not exit within 300 ms of SIGTERM; killing it/.test(l))).toBe(true);
    expect(sup.pids().size).toBe(0);
  });

  it('a worker that just returns (no start() call) is called out', async () => {
    const { sup, text, gaveUp } = setup({ noop: `console.log('nothing to do');\n` }, { maxImmediateCrashes: 2 });
    sup.start();
    await until(() => gaveUp.length === 1);
    expect(text.log[0]).toMatch(
      /worker noop\/noop-1 exited with code 0 \(does it call start\(\) from @berth\/worker\?\)/,
    );
    await sup.stop(1_000);
  });

  it('does not restart workers once shutting down', async () => {
    const { sup, text } = setup({ quick: `setTimeout(() => process.exit(0), 200);\n` });
    sup.start();
    sup.beginShutdown();
    await until(() => text.out.includes('worker stopped'));
    await new Promise((r) => setTimeout(r, 200));
    expect(text.out.match(/worker started/g)).toHaveLength(1);
  });
});

describe('WorkerSupervisor: scaling and reload', () => {
  it('add() starts a worker; retire() stops it for good; respawn() restarts it at once with a new pid', async () => {
    const { sup, text } = setup({});
    const file = join(tmp, 'idle.ts');
    writeFileSync(file, `console.log('up', process.pid);\nsetInterval(() => {}, 1000);\n`);
    const spec = (id: string): WorkerSpec => ({ endpointId: 'idle', workerId: id, file, cwd: tmp, env: process.env });
    sup.add(spec('idle-1'));
    sup.add(spec('idle-2'));
    expect(() => sup.add(spec('idle-1'))).toThrow(/already in use/);
    await until(() => sup.pids().size === 2 && (text.out.match(/\bup \d+/g) ?? []).length === 2);
    expect(sup.workerIds('idle')).toEqual(['idle-1', 'idle-2']);

    const before = sup.pids().get('idle-1');
    sup.respawn('idle-1');
    await until(() => sup.pids().get('idle-1') !== undefined && sup.pids().get('idle-1') !== before);
    expect(text.log.filter((l) => /restarting in/.test(l))).toEqual([]);

    await sup.retire('idle-2');
    expect(sup.workerIds('idle')).toEqual(['idle-1']);
    expect(sup.pids().has('idle-2')).toBe(false);
    await sup.stop(2_000);
  });

  it('onLoadFailure: a worker that exits before markConnected is dropped, not restarted; after it, an exit is a crash', async () => {
    const loadFailures: string[] = [];
    const out = new PassThrough();
    const log: string[] = [];
    const logger = createLogger({ level: 'warn', sink: (r) => log.push(r.msg) });
    const file = join(tmp, 'dies.ts');
    writeFileSync(file, `setTimeout(() => process.exit(4), 300);\n`);
    const sup = new WorkerSupervisor([], {
      loaderUrl: import.meta.resolve('tsx'),
      stdout: out,
      stderr: out,
      logger,
      color: false,
      restart: { baseDelayMs: 20 },
      onLoadFailure: (spec, how) => loadFailures.push(`${spec.workerId}: ${how}`),
    });
    sup.add({ endpointId: 'dies', workerId: 'dies-1', file, cwd: tmp, env: process.env });
    await until(() => loadFailures.length === 1);
    expect(loadFailures).toEqual(['dies-1: exited with code 4']);
    expect(sup.workerIds('dies')).toEqual([]);

    sup.add({ endpointId: 'dies', workerId: 'dies-2', file, cwd: tmp, env: process.env });
    await until(() => sup.pids().has('dies-2'));
    sup.markConnected('dies-2');
    await until(() => log.some((l) => /worker dies\/dies-2 exited with code 4 .*restarting in/.test(l)));
    expect(loadFailures).toHaveLength(1);
    await sup.stop(1_000);
  });

  it('a command worker runs in its own process group: respawn and retire end the whole group (children included)', async () => {
    const { sup, text } = setup({});
    // Like runpod-python: the worker starts a child (its heartbeat) that would outlive a signal to the worker alone.
    const script = `sleep 300 & echo "child $!"; exec sleep 300`;
    sup.add({
      endpointId: 'py',
      workerId: 'py-1',
      file: tmp,
      cwd: tmp,
      env: process.env,
      command: ['/bin/sh', '-c', script],
    });
    await until(() => /child \d+/.test(text.out));
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const firstChild = Number(/child (\d+)/.exec(text.out)![1]);
    const firstPid = sup.pids().get('py-1')!;
    expect(alive(firstChild)).toBe(true);
    sup.respawn('py-1');
    await until(() => sup.pids().get('py-1') !== undefined && sup.pids().get('py-1') !== firstPid);
    await until(() => !alive(firstChild));
    await until(() => (text.out.match(/child \d+/g) ?? []).length === 2);
    const secondChild = Number([...text.out.matchAll(/child (\d+)/g)].at(-1)![1]);
    await sup.retire('py-1');
    await until(() => !alive(secondChild));
    expect(sup.pids().size).toBe(0);
  });
});
