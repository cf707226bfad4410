import { createLogger, silentLogger } from '@berth/protocol/log';
import { createServer, type BerthServer } from '@berth/server';
import { ScaleLoop } from '@berth/server/scaling';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index.js';
import { DockerPool } from './docker-pool.js';
import { FakeDaemon } from './fake-daemon.test-helpers.js';
import { IMAGE_RETRY_MS } from './scaler-state.js';

// Issue #38, "why is my job still IN_QUEUE?": the Docker scaler's reasons on a real server's /status and
// /health (the fake daemon gives the conditions a real dockerd gives only slowly or not at will).

const KEY = 'k';
const ep = resolveConfig(
  { endpoints: { ep: { worker: './ep.ts', minWorkers: 0, maxWorkers: 1 } } },
  '/p/berth.config.json',
).endpoints[0]!;

describe('the Docker scaler says why a queued job waits', () => {
  let server: BerthServer;
  let url = '';
  beforeEach(async () => {
    server = createServer({ apiKeys: [KEY], workerTokens: ['t'], endpoints: ['ep'], logger: silentLogger });
    url = (await server.listen({ port: 0 })).url;
  });
  afterEach(() => server.close({ drainMs: 0 }));

  const auth = { authorization: `Bearer ${KEY}` };
  const get = async (path: string) => (await (await fetch(`${url}${path}`, { headers: auth })).json()) as any;
  const run = async () =>
    ((await (await fetch(`${url}/v2/ep/run`, { method: 'POST', headers: auth, body: '{"input":{}}' })).json()) as any)
      .id as string;

  /** The scale loop over a Docker pool on `daemon`, with the server's `workers`; a clock the test moves. */
  function scaler(daemon: FakeDaemon) {
    let now = 1_000_000;
    const lines: string[] = [];
    const logger = createLogger({ write: (l) => void lines.push(l) });
    const pool = new DockerPool({
      workers: server.workers,
      docker: daemon.api(),
      endpoints: [{ ep, image: 'ep-image' }],
      name: 'test',
      url: 'http://127.0.0.1:1',
      tokens: { deployment: async () => 'd0d0d0d0', settle: async () => ({ token: 'berth_wk_x', revoked: 0 }) },
      logger,
      now: () => now,
    });
    const loop = new ScaleLoop({ server, pool, endpoints: [ep], logger, now: () => now });
    return {
      lines,
      advance: (ms: number) => void (now += ms),
      tick: async () => {
        await loop.tick();
        for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      },
      stop: async () => {
        await loop.stop();
        pool.close();
      },
    };
  }

  it('cold_start while its container starts; image_missing while the image is not there, until it is', async () => {
    const daemon = new FakeDaemon();
    daemon.missingImage = true;
    const s = scaler(daemon);
    const id = await run();
    expect((await get(`/v2/ep/status/${id}`)).waitingFor).toBe('no_worker');
    await s.tick(); // the create call fails after the look: the next look gives the reason
    await s.tick();
    expect(await get(`/v2/ep/status/${id}`)).toMatchObject({ status: 'IN_QUEUE', waitingFor: 'image_missing' });
    expect((await get('/v2/ep/health')).waitingFor).toBe('image_missing');
    expect(s.lines.join('\n')).toMatch(/image ep-image not found in the docker daemon/);

    // The image is built: the next look (after the retry delay) creates the container; the job waits for its start.
    daemon.missingImage = false;
    s.advance(IMAGE_RETRY_MS);
    await s.tick();
    await s.tick(); // the reason is given at each look: the one after the start call returned
    expect(daemon.byName('test-d0d0d0d0-ep-1')?.State).toBe('running');
    expect(await get(`/v2/ep/status/${id}`)).toMatchObject({ status: 'IN_QUEUE', waitingFor: 'cold_start' });
    expect((await get('/v2/ep/health')).waitingFor).toBe('cold_start');
    await s.stop();
  });

  it('crash_loop once its containers exit at start twice in a row; cleared when one keeps running', async () => {
    const daemon = new FakeDaemon();
    daemon.exitAtStart = true;
    const s = scaler(daemon);
    const id = await run();
    await s.tick(); // creates ep-1, which exits at once
    await s.tick(); // listed as exited: crash 1 (a single crash is not a loop yet)
    expect((await get(`/v2/ep/status/${id}`)).waitingFor).not.toBe('crash_loop');
    s.advance(500);
    await s.tick(); // backoff over: another container, which exits too
    await s.tick(); // crash 2
    await s.tick();
    expect(s.lines.filter((l) => /next start in/.test(l))).toHaveLength(2);
    expect(await get(`/v2/ep/status/${id}`)).toMatchObject({ status: 'IN_QUEUE', waitingFor: 'crash_loop' });
    expect((await get('/v2/ep/health')).waitingFor).toBe('crash_loop');

    // Fixed: the next container keeps running and its worker says hello (a pull worker's first take): the crash
    // run ends, the loop clears the reason, and the next queued job waits for the busy worker.
    daemon.exitAtStart = false;
    s.advance(1_000);
    await s.tick();
    expect(daemon.byName('test-d0d0d0d0-ep-1')?.State).toBe('running');
    const take = await fetch(`${url}/v2/ep/job-take/test-d0d0d0d0-ep-1?job_in_progress=0`, {
      headers: { authorization: 't' },
    });
    expect(((await take.json()) as { id: string }).id).toBe(id);
    const next = await run();
    await s.tick();
    expect(await get(`/v2/ep/status/${next}`)).toMatchObject({ status: 'IN_QUEUE', waitingFor: 'workers_busy' });
    expect((await get('/v2/ep/health')).waitingFor).toBe('workers_busy');
    await s.stop();
  });
});
