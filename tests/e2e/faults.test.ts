// Fault tolerance: workers that die, garbage on the worker socket, shutdown, crash loops.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WORKER_WS_PATH } from '@berth/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { BASIC_ENDPOINTS, isAlive, pollUntil, startBerthDev } from './harness.test-helpers.js';

const TERMINAL = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'];
const tmp = mkdtempSync(join(tmpdir(), 'berth-faults-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a worker killed mid-job', () => {
  it('the control plane stays up, the worker is restarted, the job is requeued and finishes', async () => {
    await using berth = await startBerthDev({ waitForWorkers: ['sleep', 'echo'] });
    const { body } = await berth.post('/v2/sleep/run', { input: { ms: 3_000 } });
    const running = await pollUntil(
      () => berth.json(`/v2/sleep/status/${body.id}`),
      (r) => r.body?.status === 'IN_PROGRESS',
      10_000,
    );
    const workerId: string = running.body.workerId;
    expect(workerId).toBe('sleep-1');
    const pid = berth.workerPid(workerId);
    expect(pid).toBeDefined();

    const from = berth.lines.length;
    process.kill(pid!, 'SIGKILL');

    // The supervisor notices and restarts it with a new pid.
    await berth.waitForLine(/worker sleep\/sleep-1 was killed by SIGKILL.*restarting in/, 5_000, from);
    await berth.waitForLine(/^\[sleep\/sleep-1\] worker started \(pid \d+\)/, 10_000, from);
    expect(berth.workerPid(workerId)).not.toBe(pid);
    expect(isAlive(pid!)).toBe(false);

    // The control plane never went away.
    expect((await berth.json('/v2/echo/health')).status).toBe(200);
    expect((await berth.post('/v2/echo/runsync', { input: { still: 'up' } })).body).toMatchObject({
      status: 'COMPLETED',
      output: { still: 'up' },
    });

    // The job comes back to the queue and ends (completed on the new worker, or failed as lost).
    const final = await pollUntil(
      () => berth.json(`/v2/sleep/status/${body.id}`),
      (r) => TERMINAL.includes(r.body?.status),
      45_000,
      250,
    );
    expect(['COMPLETED', 'FAILED']).toContain(final.body.status);
    if (final.body.status === 'COMPLETED') {
      expect(final.body.output).toEqual({ slept: 3_000 });
      expect(final.body.retries).toBeGreaterThanOrEqual(1);
    }
  }, 70_000);
});

describe('the worker WebSocket', () => {
  const wsUrl = (url: string) => url.replace(/^http/, 'ws') + WORKER_WS_PATH;

  /** Opens a socket, sends each frame, collects what comes back until the server closes or 600 ms pass. */
  const exchange = (url: string, token: string, frames: (string | Buffer)[]) =>
    new Promise<{ opened: boolean; received: string[]; closeCode: number | undefined; httpStatus: number | undefined }>(
      (resolve) => {
        const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
        const out = {
          opened: false,
          received: [] as string[],
          closeCode: undefined as number | undefined,
          httpStatus: undefined as number | undefined,
        };
        const finish = () => {
          clearTimeout(timer);
          ws.terminate();
          resolve(out);
        };
        const timer = setTimeout(finish, 600);
        ws.on('unexpected-response', (_req, res) => {
          out.httpStatus = res.statusCode;
          finish();
        });
        ws.on('error', () => finish());
        ws.on('open', () => {
          out.opened = true;
          for (const f of frames) ws.send(f);
        });
        ws.on('message', (data) => out.received.push(data.toString()));
        ws.on('close', (code) => {
          out.closeCode = code;
          finish();
        });
      },
    );

  it('refuses a wrong worker token before the upgrade', async () => {
    await using berth = await startBerthDev({ waitForWorkers: ['echo'] });
    const res = await exchange(wsUrl(berth.url), 'wrong-token', []);
    expect(res.opened).toBe(false);
    expect(res.httpStatus).toBe(401);
  });

  it('malformed messages do not crash the control plane', async () => {
    await using berth = await startBerthDev({ waitForWorkers: ['echo'] });
    const url = wsUrl(berth.url);
    const garbage: (string | Buffer)[][] = [
      ['not json at all'],
      ['{"type":"job.complete","id":"x","attempt":1,"output":1}'], // before hello
      ['{"type":"nope"}'],
      ['[1,2,3]', 'null', '"hello"', '{}'],
      [Buffer.from([0xff, 0x00, 0xfe, 0x01])],
      [`${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`],
      ['{"type":"hello","protocol":999,"workerId":"evil","endpointId":"echo","concurrency":1,"stream":false}'],
      [
        '{"type":"hello","protocol":1,"workerId":"bad id with spaces","endpointId":"echo","concurrency":1,"stream":false}',
      ],
      ['{"type":"hello","protocol":1,"workerId":"w-x","endpointId":"Not_Valid!","concurrency":1,"stream":false}'],
      [
        '{"type":"hello","protocol":1,"workerId":"w-garbage","endpointId":"echo","concurrency":1,"stream":false}',
        '{"type":"job.complete","id":"no-such-job","attempt":1,"output":{}}',
        '{"type":"job.stream","id":"no-such-job","attempt":1,"seq":0,"chunks":[1]}',
        '{"type":"concurrency","concurrency":-5}',
        'garbage after hello',
      ],
    ];
    for (const frames of garbage) {
      const res = await exchange(url, berth.workerToken, frames);
      expect(res.opened).toBe(true);
      const health = await berth.json('/v2/echo/health');
      expect(health.status).toBe(200);
    }
    // Bad frames are answered with a coded error; a protocol mismatch also closes the socket.
    const notJson = await exchange(url, berth.workerToken, ['not json at all']);
    expect(notJson.received.map((m) => JSON.parse(m))).toContainEqual(
      expect.objectContaining({ type: 'error', code: 'invalid_message' }),
    );
    const mismatch = await exchange(url, berth.workerToken, garbage[6]!);
    expect(mismatch.received.map((m) => JSON.parse(m))).toContainEqual(
      expect.objectContaining({ type: 'error', code: 'protocol_mismatch' }),
    );
    expect(mismatch.closeCode).toBeDefined();

    // Still serving real work through the real worker.
    const job = await berth.post('/v2/echo/runsync', { input: { after: 'garbage' } });
    expect(job.body).toMatchObject({ status: 'COMPLETED', output: { after: 'garbage' } });
    expect(berth.child.exitCode).toBeNull();
  }, 40_000);
});

describe('lifecycle', () => {
  it('SIGINT: closes the control plane, stops the workers (even one busy with a long job), exits 0', async () => {
    await using berth = await startBerthDev({ waitForWorkers: BASIC_ENDPOINTS });
    const pids = ['echo-1', 'stream-1', 'sleep-1', 'fail-1'].map((w) => berth.workerPid(w));
    expect(pids.every((p) => p !== undefined && isAlive(p))).toBe(true);
    const { body } = await berth.post('/v2/sleep/run', { input: { ms: 60_000 } });
    await pollUntil(
      () => berth.json(`/v2/sleep/status/${body.id}`),
      (r) => r.body?.status === 'IN_PROGRESS',
      10_000,
    );
    const t0 = Date.now();
    const exit = await berth.stop('SIGINT');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(Date.now() - t0).toBeLessThan(15_000);
    await pollUntil(
      async () => pids.filter((p) => isAlive(p!)),
      (alive) => alive.length === 0,
      3_000,
    );
    expect(berth.output).toMatch(/shutting down/);
  }, 40_000);

  it('a handler that throws while loading stops berth dev at once with exit 1 and a clear message', async () => {
    writeFileSync(join(tmp, 'crash.ts'), "throw new Error('cannot load the model');\n");
    const config = join(tmp, 'crash.config.json');
    writeFileSync(config, JSON.stringify({ endpoints: { crash: { worker: './crash.ts' } } }));
    await using berth = await startBerthDev({ config, readyTimeoutMs: 0 });
    const exit = await berth.exited(20_000);
    expect(exit.code).toBe(1);
    expect(berth.output).toContain('cannot load the model');
    expect(berth.output).toMatch(
      /endpoint crash: handler crash\.ts failed to load \(worker crash-1 exited with code 1 before connecting; its error is above\)/,
    );
    expect(berth.output).not.toMatch(/restarting in/);
  }, 45_000);

  it('a handler that does not compile stops berth dev before it listens, naming file and line', async () => {
    writeFileSync(
      join(tmp, 'typo.ts'),
      "import { start } from '@berth/worker';\nstart({ handler: async (job) => { return job.input; );\n",
    );
    const config = join(tmp, 'typo.config.json');
    writeFileSync(config, JSON.stringify({ endpoints: { typo: { worker: './typo.ts' } } }));
    await using berth = await startBerthDev({ config, readyTimeoutMs: 0 });
    const exit = await berth.exited(20_000);
    expect(exit.code).toBe(1);
    expect(berth.output).toMatch(/endpoint typo: handler typo\.ts does not compile:(?:\n|\\n)\s+typo\.ts:2:\d+: /);
    // The quoted line of code ends its line: "stopping" does not run into it (issue #19).
    expect(berth.output).toMatch(/return job\.input; \);(?:\n|\\n)stopping$/m);
  }, 45_000);
});
