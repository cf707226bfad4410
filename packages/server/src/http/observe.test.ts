import { describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { API_KEY, call, listening, ScriptedWorker, until, untilStatus } from '../testing.test-helpers.js';

const SCHEMA = { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] };
const MODELS = {
  'tiny-draw': {
    endpoint: 'echo',
    kind: 'image' as const,
    description: 'test model',
    price: { base: 0.001, perMegapixelStep: 0.01 },
  },
};

async function text(url: string, path: string, key = API_KEY) {
  const res = await fetch(url + path, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}

describe('per-job logs and the jobs listing (real socket, scripted worker)', () => {
  it('stores what the worker forwards for its attempt, answers it at /logs/<id>, refuses lines for jobs it does not hold', async () => {
    await using s = await listening();
    const w = await ScriptedWorker.connect(s.url, { workerId: 'gpu-1' });
    await w.next('welcome');
    const { body: job } = await call(s.server, 'POST', '/v2/echo/run', { body: { input: { prompt: 'hi' } } });
    const assign = await w.next('job.assign');
    w.send({
      type: 'job.log',
      id: job['id'],
      attempt: assign.attempt,
      lines: [
        { t: 1_700_000_000_000, level: 'info', msg: 'loading', fields: { step: 1 } },
        { t: 1_700_000_000_001, level: 'warn', msg: 'slow' },
      ],
    });
    w.send({
      type: 'job.log',
      id: job['id'],
      attempt: assign.attempt + 1,
      lines: [{ t: 1, level: 'error', msg: 'not my attempt' }],
    });
    w.send({ type: 'job.complete', id: job['id'], attempt: assign.attempt, output: { ok: true } });
    await untilStatus(s.server, 'echo', job['id'], 'COMPLETED');
    // After the result: still accepted (same worker, same attempt), as the runtime's "job completed" line is.
    w.send({
      type: 'job.log',
      id: job['id'],
      attempt: assign.attempt,
      lines: [{ t: 1_700_000_000_002, level: 'info', msg: 'job completed' }],
    });
    const logs = await until(async () => {
      const r = await call(s.server, 'GET', `/v2/echo/logs/${job['id']}`);
      return r.body['logs']?.length === 3 ? r : undefined;
    });
    expect(logs.status).toBe(200);
    expect(logs.body).toEqual({
      id: job['id'],
      dropped: 0,
      logs: [
        {
          time: '2023-11-14T22:13:20.000Z',
          level: 'info',
          message: 'loading',
          workerId: 'gpu-1',
          attempt: 1,
          fields: { step: 1 },
        },
        { time: '2023-11-14T22:13:20.001Z', level: 'warn', message: 'slow', workerId: 'gpu-1', attempt: 1 },
        { time: '2023-11-14T22:13:20.002Z', level: 'info', message: 'job completed', workerId: 'gpu-1', attempt: 1 },
      ],
    });
    // Another worker cannot write this job's log.
    const other = await ScriptedWorker.connect(s.url, { workerId: 'intruder' });
    await other.next('welcome');
    other.send({ type: 'job.log', id: job['id'], attempt: 1, lines: [{ t: 2, level: 'info', msg: 'forged' }] });
    other.send({ type: 'ping', t: 1 });
    await other.next('pong');
    expect((await call(s.server, 'GET', `/v2/echo/logs/${job['id']}`)).body['logs']).toHaveLength(3);
    // Same auth and 404s as /status.
    expect(
      (await call(s.server, 'GET', `/v2/echo/logs/${job['id']}`, { headers: { authorization: 'Bearer nope' } })).status,
    ).toBe(401);
    expect((await call(s.server, 'GET', '/v2/echo/logs/unknown-job')).body['code']).toBe('job_not_found');
    await w.close();
    await other.close();
  });

  it('/jobs lists recent jobs newest first with times and workers; limit is checked', async () => {
    const clock = new ManualClock();
    await using s = await listening({ clock });
    const w = await ScriptedWorker.connect(s.url, { workerId: 'gpu-2' });
    await w.next('welcome');
    const first = (await call(s.server, 'POST', '/v2/echo/run', { body: { input: { n: 1 } } })).body;
    const a = await w.next('job.assign');
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: 1 });
    await untilStatus(s.server, 'echo', first['id'], 'COMPLETED');
    clock.advance(1_000); // distinct createdAt
    const second = (await call(s.server, 'POST', '/v2/echo/run', { body: { input: { n: 2 } } })).body;
    const list = await call(s.server, 'GET', '/v2/echo/jobs?limit=10');
    expect(list.status).toBe(200);
    const jobs = list.body['jobs'] as Record<string, unknown>[];
    expect(jobs.map((j) => j['id'])).toEqual([second['id'], first['id']]);
    expect(jobs[1]).toMatchObject({
      status: 'COMPLETED',
      workerId: 'gpu-2',
      delayTime: expect.any(Number),
      executionTime: expect.any(Number),
    });
    expect(new Date(jobs[1]!['createdAt'] as string).getTime()).toBeGreaterThan(0);
    expect(jobs[1]).not.toHaveProperty('input');
    expect((await call(s.server, 'GET', '/v2/echo/jobs?limit=1')).body['jobs']).toHaveLength(1);
    for (const bad of ['0', '501', 'x', '-1'])
      expect((await call(s.server, 'GET', `/v2/echo/jobs?limit=${bad}`)).body['code']).toBe('invalid_limit');
    await w.close();
  });
});

describe('catalog, estimate and metrics', () => {
  it('the catalog lists endpoints with the schema their worker announced, and models with schemas and prices', async () => {
    await using s = await listening({ endpoints: ['echo', 'other'], models: MODELS });
    const w = await ScriptedWorker.connect(s.url, { workerId: 'gpu-3', inputSchema: SCHEMA, stream: true });
    await w.next('welcome');
    const r = await call(s.server, 'GET', '/v2/_berth/catalog');
    expect(r.status).toBe(200);
    const eps = r.body['endpoints'] as Record<string, unknown>[];
    expect(eps.map((e) => e['id'])).toEqual(['echo', 'other']);
    expect(eps[0]).toMatchObject({ type: 'queue', stream: true, inputSchema: SCHEMA, workers: { idle: 1 } });
    expect(eps[1]).toMatchObject({ stream: false, inputSchema: null });
    const model = (r.body['models'] as Record<string, any>[])[0]!;
    expect(model).toMatchObject({
      slug: 'tiny-draw',
      endpoint: 'echo',
      kind: 'image',
      description: 'test model',
      priced: true,
    });
    expect(model['inputSchema'].required).toEqual(['prompt']);
    expect(model['inputSchema'].properties.width).toMatchObject({ type: 'integer', multipleOf: 8 });
    expect(JSON.stringify(r.body)).not.toContain(API_KEY);
    expect((await call(s.server, 'GET', '/v2/_berth/catalog', { headers: { authorization: '' } })).status).toBe(401);
    expect((await call(s.server, 'POST', '/v2/_berth/catalog')).status).toBe(405);
    await w.close();
  });

  it('estimate prices an input without queueing it, and names bad fields', async () => {
    await using s = await listening({ models: MODELS });
    const ok = await call(s.server, 'POST', '/v2/tiny-draw/estimate', {
      body: { input: { prompt: 'a cat', width: 512, height: 512, num_inference_steps: 10 } },
    });
    expect(ok.status).toBe(200);
    expect(ok.body['cost']).toBeCloseTo(0.001 + 0.01 * 0.262144 * 10, 6);
    expect(ok.body['input']).toMatchObject({ prompt: 'a cat', guidance: 5, output_format: 'png' });
    const bad = await call(s.server, 'POST', '/v2/tiny-draw/estimate', {
      body: { input: { prompt: 'x', width: 100 } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body['error']).toMatch(/^invalid_input: width: must be a multiple of 8/);
    expect((await call(s.server, 'POST', '/v2/echo/estimate', { body: { input: {} } })).body['code']).toBe(
      'route_not_found',
    );
    expect((await call(s.server, 'GET', '/v2/echo/health')).body['jobs']).toMatchObject({ inQueue: 0 });
  });

  it('/metrics answers Prometheus text: jobs, queue depth, histograms, workers, webhooks, rate-limit rejections', async () => {
    await using s = await listening({ rateLimits: { base: { status: 2 }, perWorker: 0 } });
    const w = await ScriptedWorker.connect(s.url, { workerId: 'gpu-4' });
    await w.next('welcome');
    const job = (await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } })).body;
    const a = await w.next('job.assign');
    w.send({ type: 'job.complete', id: a.id, attempt: a.attempt, output: 1 });
    await until(
      async () => (await call(s.server, 'GET', `/v2/echo/status/${job['id']}`)).body['status'] === 'COMPLETED',
    );
    await call(s.server, 'POST', '/v2/echo/run', { body: { input: {} } }); // assigned to the free worker: IN_PROGRESS
    await w.next('job.assign');
    for (let i = 0; i < 4; i++) await call(s.server, 'GET', `/v2/echo/status/${job['id']}`); // some get 429
    const m = await text(s.url, '/metrics');
    expect(m.status).toBe(200);
    expect(m.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.body).toContain('berth_jobs_completed_total{endpoint="echo"} 1');
    expect(m.body).toMatch(/berth_jobs\{endpoint="echo",state="IN_PROGRESS"\} 1/);
    expect(m.body).toMatch(/berth_queue_depth\{endpoint="echo"\} 0/);
    expect(m.body).toContain('berth_job_delay_seconds_count{endpoint="echo"} 1');
    expect(m.body).toContain('berth_job_execution_seconds_bucket{endpoint="echo",le="+Inf"} 1');
    expect(m.body).toContain('berth_workers{endpoint="echo",state="running"} 1');
    expect(m.body).toContain('berth_webhook_attempts_total{outcome="delivered"} 0');
    expect(m.body).toMatch(/berth_rate_limited_total\{endpoint="echo",operation="status"\} [1-9]/);
    for (const line of m.body.trim().split('\n'))
      expect(line).toMatch(
        /^(# (HELP|TYPE) (berth|process|nodejs)_\w+ .+|(berth|process|nodejs)_\w+(\{[^}]*\})? -?[0-9.e+-]+)$/,
      );
    expect((await text(s.url, '/metrics', '')).status).toBe(401);
    await w.close();
  });
});
