import type { JobObject } from '@berth/protocol';
import { silentLogger } from '@berth/protocol/log';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type BerthServer } from '../server.js';
import { WorkerRegistry } from '../workers/worker-registry.js';

const KEY = 'k';
const TOKEN = 'tok';

/** `/status` of a queued job: `queuePosition` and `waitingFor`, on a real server with a RunPod-protocol worker. */
describe('why a queued job waits', () => {
  let server: BerthServer;
  let url = '';
  beforeEach(async () => {
    server = createServer({
      apiKeys: [KEY],
      workerTokens: [TOKEN],
      endpoints: ['echo'],
      pullHoldMs: 2000,
      logger: silentLogger,
    });
    url = (await server.listen({ port: 0 })).url;
  });
  afterEach(() => server.close({ drainMs: 50 }));

  const auth = { authorization: `Bearer ${KEY}` };
  const run = async (policy: object = {}) =>
    (
      (await (
        await fetch(`${url}/v2/echo/run`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ input: {}, policy }),
        })
      ).json()) as JobObject
    ).id;
  const status = async (id: string) =>
    (await (await fetch(`${url}/v2/echo/status/${id}`, { headers: auth })).json()) as JobObject;
  const worker = (path: string) => fetch(`${url}/v2/echo/${path}`, { headers: { authorization: TOKEN } });

  it('gives the position in the queue and no_worker, then workers_busy, and nothing once running', async () => {
    const [a, b, c] = [await run(), await run(), await run()];
    expect(await status(a)).toMatchObject({ status: 'IN_QUEUE', queuePosition: 0, waitingFor: 'no_worker' });
    expect(await status(c)).toMatchObject({ status: 'IN_QUEUE', queuePosition: 2, waitingFor: 'no_worker' });
    // A worker takes the head job and holds it: the others wait for a busy worker.
    const took = (await (await worker('job-take/w1?gpu=local&job_in_progress=0')).json()) as { id: string };
    expect(took.id).toBe(a);
    const running = await status(a);
    expect(running.status).toBe('IN_PROGRESS');
    expect(running).not.toHaveProperty('queuePosition');
    expect(running).not.toHaveProperty('waitingFor');
    expect(await status(b)).toMatchObject({ queuePosition: 0, waitingFor: 'workers_busy' });
    expect(await status(c)).toMatchObject({ queuePosition: 1, waitingFor: 'workers_busy' });
  });

  it("gives the scaler's reason set through server.workers, on /status and /health, until it clears it", async () => {
    const id = await run();
    const health = async () =>
      ((await (await fetch(`${url}/v2/echo/health`, { headers: auth })).json()) as { waitingFor?: string }).waitingFor;
    expect(await health()).toBe('no_worker');
    server.workers.setWaitReason('echo', 'image_missing');
    expect(await status(id)).toMatchObject({ queuePosition: 0, waitingFor: 'image_missing' });
    expect(await health()).toBe('image_missing');
    server.workers.setWaitReason('echo', undefined);
    expect((await status(id)).waitingFor).toBe('no_worker');
  });

  it('says workers_unhealthy when the only workers failed their fitness checks', async () => {
    const id = await run();
    await worker('ping/pod-1?status=unhealthy&check=check_gpu&reason=no%20GPU');
    expect(await status(id)).toMatchObject({ queuePosition: 0, waitingFor: 'workers_unhealthy' });
  });
});

describe('WorkerRegistry.waitingFor', () => {
  const wait = (r: WorkerRegistry, low = false) => r.waitingFor('ep', low, performance.now(), 5000);

  it('names a starting worker, a broken handler and the scaler reasons, each on its own endpoint', () => {
    const r = new WorkerRegistry();
    expect(wait(r)).toBe('no_worker');
    r.setExpected('ep', 1);
    expect(wait(r)).toBe('cold_start');
    r.setHandlerBroken('ep', true);
    expect(wait(r)).toBe('handler_broken');
    r.setWaitReason('ep', 'image_missing');
    expect(wait(r)).toBe('image_missing');
    expect(r.waitingFor('other', false, performance.now(), 5000)).toBe('no_worker');
    r.setWaitReason('ep', 'crash_loop');
    expect(wait(r)).toBe('crash_loop');
    r.setWaitReason('ep', undefined);
    r.setHandlerBroken('ep', false);
    expect(wait(r)).toBe('cold_start');
  });

  it('gives low_priority to lowPriority jobs only', () => {
    const r = new WorkerRegistry();
    r.setWaitReason('ep', 'low_priority');
    expect(wait(r, true)).toBe('low_priority');
    expect(wait(r, false)).toBe('no_worker');
  });
});
