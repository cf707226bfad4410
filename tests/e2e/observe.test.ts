// Per-job logs, input schemas and metrics with a real worker process (examples/basic/greet.ts) under `berth dev`.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startBerthDev, type BerthDev } from './harness.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-observe-'));
let berth: BerthDev;

beforeAll(async () => {
  const config = join(dir, 'berth.config.json');
  writeFileSync(
    config,
    JSON.stringify({ endpoints: { greet: { worker: join(REPO_ROOT, 'examples/basic/greet.ts'), workers: 1 } } }),
  );
  berth = await startBerthDev({ config, waitForWorkers: ['greet'] });
}, 60_000);
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe('observability with a real worker', () => {
  it('the banner links the playground with the key in the fragment, and / serves the page', async () => {
    expect(berth.output).toContain(`Playground: ${berth.url}/#key=${berth.apiKey}`);
    const page = await berth.fetch('/', { auth: false });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).not.toContain(berth.apiKey);
  });

  it('handler logs (job.log and console.log) reach GET /logs/<id> by the time runsync answers, tagged with the worker and attempt', async () => {
    const { body: job } = await berth.post('/v2/greet/runsync', { input: { name: 'Ada', times: 2 } });
    expect(job).toMatchObject({ status: 'COMPLETED', output: { greetings: ['Hello, Ada!', 'Hello, Ada!'] } });
    const { body } = await berth.json(`/v2/greet/logs/${job.id}`); // flushed before the result: no waiting
    const messages = body.logs.map((l: { message: string }) => l.message);
    // What the handler logged, in order; the runtime's own lifecycle lines stay in the worker's output.
    expect(messages).toEqual(['greeting', 'console works too: 2 greeting(s) for Ada']);
    const greeting = body.logs.find((l: { message: string }) => l.message === 'greeting');
    expect(greeting).toMatchObject({
      level: 'info',
      workerId: job.workerId,
      attempt: 1,
      fields: { name: 'Ada', times: 2 },
    });
  });

  it('the declared input schema fails bad inputs before the handler and is announced in the catalog', async () => {
    const { body: bad } = await berth.post('/v2/greet/runsync', { input: { name: '', times: 50 } });
    expect(bad.status).toBe('FAILED');
    expect(bad.error).toMatch(/^invalid_input: name: .*; times: /);
    const { body: defaults } = await berth.post('/v2/greet/runsync', { input: { name: 'Bo' } });
    expect(defaults.output).toEqual({ greetings: ['Hello, Bo!'] });
    const { body: catalog } = await berth.json('/v2/_berth/catalog');
    const greet = catalog.endpoints.find((e: { id: string }) => e.id === 'greet');
    expect(greet.inputSchema).toMatchObject({
      type: 'object',
      required: ['name'],
      properties: { times: { type: 'integer', minimum: 1, maximum: 10, default: 1 } },
    });
  });

  it('/metrics counts what happened', async () => {
    const res = await berth.fetch('/metrics');
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(text).toMatch(/berth_jobs_completed_total\{endpoint="greet"\} [2-9]/);
    expect(text).toMatch(/berth_jobs_failed_total\{endpoint="greet"\} [1-9]/);
    expect(text).toMatch(/berth_job_execution_seconds_count\{endpoint="greet"\} [3-9]/);
    expect(text).toMatch(/berth_workers\{endpoint="greet",state="idle"\} 1/);
  });
});
