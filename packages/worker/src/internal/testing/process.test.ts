import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnWorker } from './child-process.test-helpers.js';
import { startFakeControlPlane } from './fake-control-plane.test-helpers.js';

const emptyDir = mkdtempSync(join(tmpdir(), 'berth-proc-'));
afterAll(() => rmSync(emptyDir, { recursive: true, force: true }));

describe('worker process: connected mode', () => {
  it('follows the env contract, serves a job, and drains on SIGTERM (exit 0)', async () => {
    await using cp = await startFakeControlPlane();
    await using child = spawnWorker(
      {
        BERTH_URL: cp.baseUrl,
        BERTH_ENDPOINT_ID: 'echo',
        BERTH_WORKER_TOKEN: cp.token,
        BERTH_WORKER_ID: 'child-1',
        BERTH_CONCURRENCY: '3',
      },
      [],
      emptyDir,
    );
    const socket = await cp.connection(0, 15_000);
    expect(socket.headers.authorization).toBe(`Bearer ${cp.token}`);
    expect(socket.hello).toMatchObject({
      workerId: 'child-1',
      endpointId: 'echo',
      concurrency: 3,
      stream: false,
      inflight: [],
    });

    socket.send({ type: 'job.assign', id: 'j1', attempt: 1, input: { n: 1 } });
    expect(await socket.next('job.complete')).toMatchObject({ id: 'j1', output: { echo: { n: 1 } } });

    socket.send({ type: 'job.assign', id: 'j2', attempt: 1, input: { sleepMs: 300 } });
    await child.waitForStderr('job received');
    child.proc.kill('SIGTERM');
    await socket.next('draining');
    expect(await socket.next('job.complete', (m) => m.id === 'j2')).toMatchObject({
      output: { echo: { sleepMs: 300 } },
    });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(socket.invalid).toEqual([]);
  });

  it('aborts jobs still running at BERTH_DRAIN_TIMEOUT_MS, reports them aborted, exits 0', async () => {
    await using cp = await startFakeControlPlane();
    await using child = spawnWorker({
      BERTH_URL: cp.baseUrl,
      BERTH_ENDPOINT_ID: 'echo',
      BERTH_WORKER_TOKEN: cp.token,
      BERTH_DRAIN_TIMEOUT_MS: '100',
      FIXTURE_HANDLER: 'stubborn',
    });
    const socket = await cp.connection(0, 15_000);
    socket.send({ type: 'job.assign', id: 'j1', attempt: 1, input: {} });
    await child.waitForStderr('job received');
    child.proc.kill('SIGTERM');
    expect(await socket.next('job.fail')).toEqual({
      type: 'job.fail',
      id: 'j1',
      attempt: 1,
      error: 'the worker is shutting down',
      aborted: true,
    });
    expect(await child.exited).toEqual({ code: 0, signal: null });
  });

  it('exits 1 on protocol_mismatch instead of reconnecting', async () => {
    await using cp = await startFakeControlPlane({
      welcome: (_hello, socket) => {
        socket.send({ type: 'error', code: 'protocol_mismatch', message: 'server speaks protocol 9' });
        return undefined;
      },
    });
    await using child = spawnWorker({ BERTH_URL: cp.baseUrl, BERTH_ENDPOINT_ID: 'echo', BERTH_WORKER_TOKEN: cp.token });
    expect((await child.exited).code).toBe(1);
    expect(child.stderr).toContain('protocol_mismatch');
    expect(cp.sockets).toHaveLength(1);
  });

  it('exits 1 with a message naming the variable when the environment is incomplete', async () => {
    await using child = spawnWorker({ BERTH_URL: 'http://127.0.0.1:9' });
    expect((await child.exited).code).toBe(1);
    expect(child.stderr).toContain('BERTH_ENDPOINT_ID must be set');
  });
});

describe('worker process: local mode', () => {
  it('--test-input runs one job, prints the result, exits 0', async () => {
    await using child = spawnWorker({}, ['--test-input', '{"input": {"prompt": "hi"}}'], emptyDir);
    expect((await child.exited).code).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({
      id: 'local-test',
      status: 'COMPLETED',
      output: { echo: { prompt: 'hi' } },
    });
  });

  it('a failing handler prints FAILED and exits 1', async () => {
    await using child = spawnWorker({ FIXTURE_HANDLER: 'fail' }, ['--test-input', '{}'], emptyDir);
    expect((await child.exited).code).toBe(1);
    expect(JSON.parse(child.stdout)).toEqual({ id: 'local-test', status: 'FAILED', error: 'fixture failure' });
  });

  it('reads test_input.json from the working directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-input-'));
    try {
      writeFileSync(join(dir, 'test_input.json'), JSON.stringify({ input: { from: 'file' } }));
      await using child = spawnWorker({}, [], dir);
      expect((await child.exited).code).toBe(0);
      expect(JSON.parse(child.stdout)).toMatchObject({ status: 'COMPLETED', output: { echo: { from: 'file' } } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without BERTH_URL or a test input, says what to set and exits 1', async () => {
    await using child = spawnWorker({}, [], emptyDir);
    expect((await child.exited).code).toBe(1);
    expect(child.stdout).toBe('');
    expect(child.stderr).toContain('BERTH_URL');
    expect(child.stderr).toContain('--test-input');
  });
});
