import { describe, expect, it } from 'vitest';
import { API_KEY, testServer, ScriptedWorker, call, listening, untilStatus } from '../testing.test-helpers.js';
import { ManualClock } from '../clock.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { webhookReceiver } from '../webhooks/receiver.test-helpers.js';
import { checkInput } from './input.js';
import { costOf } from './pricing.js';
import { resolveModels } from './registry.js';
import type { ModelConfig } from './types.js';

const MODELS: Record<string, ModelConfig> = {
  'shapes-diffusion': {
    endpoint: 'echo',
    kind: 'image',
    description: 'coloured shapes',
    price: { base: 0.001, perMegapixelStep: 0.05, perUpscale: { '2': 0.002, '4': 0.004 } },
    limits: { defaultWidth: 64, defaultHeight: 64, minSize: 32, maxSize: 128, sizeMultiple: 4 },
  },
  'esrgan-upscale': { endpoint: 'echo', kind: 'upscale', price: { base: 0.0005, perUpscale: { '4': 0.001 } } },
};
const models = resolveModels(MODELS);
const image = models.get('shapes-diffusion')!;
const upscale = models.get('esrgan-upscale')!;

describe('cost formula', () => {
  it('image: base + perMegapixelStep x width x height / 1e6 x steps (+ perUpscale)', () => {
    expect(costOf(image, { width: 64, height: 64, num_inference_steps: 20 })).toBe(
      Math.round((0.001 + 0.05 * 0.004096 * 20) * 1e6) / 1e6,
    );
    expect(costOf(image, { width: 128, height: 64, num_inference_steps: 10, upscale: 4 })).toBe(
      Math.round((0.001 + 0.05 * 0.008192 * 10 + 0.004) * 1e6) / 1e6,
    );
    // Doubling the steps doubles the variable part.
    const a = costOf(image, { width: 96, height: 96, num_inference_steps: 10 }) - 0.001;
    const b = costOf(image, { width: 96, height: 96, num_inference_steps: 20 }) - 0.001;
    expect(b / a).toBeCloseTo(2, 5);
  });
  it('upscale: base + perUpscale[scale]', () => {
    expect(costOf(upscale, { image: 'x', scale: 2 })).toBe(0.0005);
    expect(costOf(upscale, { image: 'x', scale: 4 })).toBe(0.0015);
  });
});

describe('input validation', () => {
  it('fills in defaults so worker and cost see the same values', () => {
    expect(checkInput(image, { prompt: 'a big red circle on a blue background' })).toEqual({
      ok: true,
      input: {
        prompt: 'a big red circle on a blue background',
        width: 64,
        height: 64,
        num_inference_steps: 20,
        guidance: 5,
        output_format: 'png',
      },
    });
    expect(checkInput(upscale, { image: 'https://x/y.png' })).toEqual({
      ok: true,
      input: { image: 'https://x/y.png', scale: 2, output_format: 'png' },
    });
  });
  it('names every bad field: types, ranges, multiples, enums, unknown fields, missing prompt', () => {
    const r = checkInput(image, {
      width: '64',
      height: 130,
      num_inference_steps: 2.5,
      guidance: -1,
      output_format: 'gif',
      steps: 3,
      seed: -4,
    });
    expect(r.ok).toBe(false);
    const problems = r.ok ? [] : r.problems;
    expect(problems).toEqual([
      'unknown field "steps" (known: prompt, negative_prompt, width, height, num_inference_steps, guidance, seed, output_format, upscale, scheduler)',
      'prompt: is required',
      'width: must be a number (got "64")',
      'height: must be from 32 to 128 (got 130)',
      'num_inference_steps: must be a whole number (got 2.5)',
      'guidance: must be from 0 to 30 (got -1)',
      'seed: must be from 0 to 9007199254740991 (got -4)',
      'output_format: must be one of "png", "webp", "jpeg" (got "gif")',
    ]);
    expect(checkInput(image, { prompt: 'x', width: 66 })).toEqual({
      ok: false,
      problems: ['width: must be a multiple of 4 (got 66)'],
    });
    expect(checkInput(upscale, { image: 'x', scale: 3 })).toEqual({
      ok: false,
      problems: ['scale: must be one of 2, 4 (got 3)'],
    });
  });
});

describe('model registry options', () => {
  it('refuses bad slugs, kinds, prices, limits and slug/endpoint clashes with a message naming the field', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ Shapes: { endpoint: 'echo', kind: 'image' } }, /not a valid model slug/],
      [{ 'a--b': { endpoint: 'echo', kind: 'image' } }, /not a valid model slug/],
      [
        { m: { endpoint: 'echo', kind: 'speech' } },
        /models\.m\.kind must be one of image, upscale, audio, video \(got "speech"\)/,
      ],
      [
        { m: { endpoint: 'echo', kind: 'image', price: { base: -1 } } },
        /models\.m\.price\.base must be a non-negative number/,
      ],
      [{ m: { endpoint: 'echo', kind: 'image', price: { perStep: 1 } } }, /unknown field "perStep"/],
      [
        { m: { endpoint: 'echo', kind: 'image', limits: { defaultWidth: 63 } } },
        /defaultWidth \(63\) must be from minSize to maxSize and a multiple of sizeMultiple/,
      ],
    ];
    for (const [cfg, re] of bad) expect(() => resolveModels(cfg as Record<string, ModelConfig>)).toThrow(re);
    expect(() => testServer({ endpoints: ['echo', 'm'], models: { m: { endpoint: 'echo', kind: 'image' } } })).toThrow(
      /also an endpoint id/,
    );
  });
});

describe('public model routes (real server, scripted worker)', () => {
  it('run/status on /v2/<slug>: the endpoint worker gets the defaulted input, COMPLETED output carries image_url, cost and workerId', async () => {
    await using s = await listening({ models: MODELS });
    const worker = await ScriptedWorker.connect(s.url, { workerId: 'gpu-1' });
    await worker.next('welcome');
    const { status, body } = await call(s.server, 'POST', '/v2/shapes-diffusion/run', {
      body: { input: { prompt: 'a red circle', width: 96, num_inference_steps: 10 } },
    });
    expect([status, body.status]).toEqual([200, 'IN_QUEUE']);
    const assign = await worker.next('job.assign');
    expect(assign.input).toEqual({
      prompt: 'a red circle',
      width: 96,
      height: 64,
      num_inference_steps: 10,
      guidance: 5,
      output_format: 'png',
    });
    worker.send({
      type: 'job.complete',
      id: assign.id,
      attempt: assign.attempt,
      output: { image_url: 'http://files/x.png' },
    });
    const done = await untilStatus(s.server, 'shapes-diffusion', body.id, 'COMPLETED');
    expect(done.output).toEqual({ image_url: 'http://files/x.png', cost: costOf(image, assign.input) });
    expect(done.workerId).toBe('gpu-1');
    // The cost is stored with the output: the same job read through its endpoint id carries it too.
    expect((await call(s.server, 'GET', `/v2/echo/status/${body.id}`)).body.output).toEqual({
      image_url: 'http://files/x.png',
      cost: costOf(image, assign.input),
    });
    await worker.close();
  });

  it('runsync answers the COMPLETED job object with cost; health, purge-queue and cancel work on the slug', async () => {
    await using s = await listening({ models: MODELS });
    const worker = await ScriptedWorker.connect(s.url);
    await worker.next('welcome');
    const pending = call(s.server, 'POST', '/v2/esrgan-upscale/runsync', {
      body: { input: { image: 'data:image/png;base64,AAAA', scale: 4 } },
    });
    const assign = await worker.next('job.assign');
    worker.send({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output: { image_url: 'u' } });
    const { body } = await pending;
    expect(body).toMatchObject({ status: 'COMPLETED', output: { image_url: 'u', cost: 0.0015 }, workerId: 'w1' });
    expect(body.id).toMatch(/^sync-/);
    expect((await call(s.server, 'GET', '/v2/esrgan-upscale/health')).body.jobs.completed).toBe(1);
    expect((await call(s.server, 'POST', '/v2/esrgan-upscale/purge-queue')).body).toEqual({
      removed: 0,
      status: 'completed',
    });
    const c = await call(s.server, 'POST', `/v2/esrgan-upscale/cancel/${body.id}`);
    expect(c.body.status).toBe('COMPLETED');
    expect((await call(s.server, 'POST', '/v2/no-such-model/run', { body: { input: {} } })).status).toBe(404);
    await worker.close();
  });

  it('the webhook of a completed job on a priced model carries output.cost (stored with the output)', async () => {
    await using hook = await webhookReceiver([200]);
    await using s = await listening({ models: MODELS, webhooks: { allow: ['loopback'], pollMs: 50 } });
    const worker = await ScriptedWorker.connect(s.url, { endpointId: 'echo', workerId: 'gpu-1' });
    const { body } = await call(s.server, 'POST', '/v2/shapes-diffusion/run', {
      body: { input: { prompt: 'a red circle' }, webhook: hook.url },
    });
    const assign = await worker.next('job.assign');
    worker.send({
      type: 'job.complete',
      id: assign.id,
      attempt: assign.attempt,
      output: { image_url: 'http://files/y.png' },
    });
    const [got] = await hook.count(1);
    expect(JSON.parse(got!.body)).toMatchObject({
      id: body.id,
      status: 'COMPLETED',
      output: { image_url: 'http://files/y.png', cost: costOf(image, assign.input) },
    });
    await worker.close();
  });

  it('a job refused for its input still notifies its webhook (FAILED with the error)', async () => {
    await using hook = await webhookReceiver([200]);
    await using s = await listening({ models: MODELS, webhooks: { allow: ['loopback'], pollMs: 50 } });
    const { body } = await call(s.server, 'POST', '/v2/shapes-diffusion/run', {
      body: { input: { prompt: 'x', width: 7 }, webhook: hook.url },
    });
    expect(body.status).toBe('FAILED');
    const [got] = await hook.count(1);
    expect(JSON.parse(got!.body)).toMatchObject({
      id: body.id,
      status: 'FAILED',
      error: 'invalid_input: width: must be from 32 to 128 (got 7)',
      webhook: hook.url,
    });
  });

  it.each([
    ['memory', () => new MemoryStore()],
    ['SQLite', () => new SqliteStore({ file: ':memory:' })],
  ])('%s store: a refused job is stored FAILED, readable, then deleted after retention', async (_, store) => {
    const clock = new ManualClock();
    await using s = await listening({ models: MODELS, store: store(), clock, retention: { sync: 60_000 } });
    const { body } = await call(s.server, 'POST', '/v2/shapes-diffusion/runsync', {
      body: { input: { prompt: 'x', output_format: 'gif' } },
    });
    expect(body).toMatchObject({
      status: 'FAILED',
      error: 'invalid_input: output_format: must be one of "png", "webp", "jpeg" (got "gif")',
    });
    expect((await call(s.server, 'GET', `/v2/shapes-diffusion/status/${body.id}`)).body.status).toBe('FAILED');
    clock.advance(60_001);
    await s.server.sweep();
    expect((await call(s.server, 'GET', `/v2/shapes-diffusion/status/${body.id}`)).status).toBe(404);
  });

  it('the final SSE event of /stream on the slug carries the cost too', async () => {
    await using s = await listening({ models: MODELS });
    const worker = await ScriptedWorker.connect(s.url);
    await worker.next('welcome');
    const { body } = await call(s.server, 'POST', '/v2/shapes-diffusion/run', { body: { input: { prompt: 'p' } } });
    const assign = await worker.next('job.assign');
    const res = await s.server.handle({
      method: 'GET',
      path: `/v2/shapes-diffusion/stream/${body.id}`,
      query: new URLSearchParams(),
      headers: { authorization: `Bearer ${API_KEY}`, accept: 'text/event-stream' },
    });
    expect('events' in res).toBe(true);
    worker.send({ type: 'job.stream', id: assign.id, attempt: assign.attempt, seq: 0, chunks: [{ step: 1 }] });
    worker.send({ type: 'job.complete', id: assign.id, attempt: assign.attempt, output: { image_url: 'u' } });
    let text = '';
    if ('events' in res) for await (const ev of res.events) text += ev;
    expect(text).toContain('data: {"output":{"step":1}}');
    const done = JSON.parse(/event: done\ndata: (.*)\n/.exec(text)![1]!);
    expect(done).toMatchObject({ status: 'COMPLETED', output: { image_url: 'u', cost: costOf(image, assign.input) } });
    await worker.close();
  });

  it('a bad input is a FAILED job object with a clear error (runsync and run), readable by /status, never sent to a worker', async () => {
    await using s = await listening({ models: MODELS });
    const worker = await ScriptedWorker.connect(s.url);
    await worker.next('welcome');
    const sync = await call(s.server, 'POST', '/v2/shapes-diffusion/runsync', {
      body: { input: { prompt: 'x', width: 4096, guidance: 'high' } },
    });
    expect(sync.status).toBe(200);
    expect(sync.body).toEqual({
      id: sync.body.id,
      status: 'FAILED',
      error: 'invalid_input: width: must be from 32 to 128 (got 4096); guidance: must be a number (got "high")',
    });
    const run = await call(s.server, 'POST', '/v2/shapes-diffusion/run', { body: { input: { width: 64 } } });
    expect(run.body).toMatchObject({ status: 'FAILED', error: 'invalid_input: prompt: is required' });
    expect((await call(s.server, 'GET', `/v2/shapes-diffusion/status/${run.body.id}`)).body).toMatchObject({
      status: 'FAILED',
      error: 'invalid_input: prompt: is required',
    });
    const retry = await call(s.server, 'POST', `/v2/shapes-diffusion/retry/${run.body.id}`);
    expect([retry.status, retry.body.code]).toEqual([409, 'job_not_retryable']);
    expect(retry.body.error).toContain('prompt: is required');
    // A request that is not a job request at all keeps its 400.
    expect((await call(s.server, 'POST', '/v2/shapes-diffusion/run', { body: { input: 'x' } })).body.code).toBe(
      'invalid_request',
    );
    expect((await call(s.server, 'POST', '/v2/shapes-diffusion/run', { raw: '{nope' })).body.code).toBe('invalid_json');
    await new Promise((r) => setTimeout(r, 30));
    expect(worker.count('job.assign')).toBe(0);
    await worker.close();
  });
});
