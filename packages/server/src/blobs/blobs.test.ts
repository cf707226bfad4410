import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import { API_KEY, listening, ScriptedWorker, until, WORKER_TOKEN } from '../testing.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-blobs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A JSON body of about `mb` MB whose input holds a string of random-ish base64 (byte-exact checks). */
function bigBody(mb: number, extra: Record<string, unknown> = {}) {
  const bytes = Buffer.allocUnsafe(Math.floor(mb * 1024 * 1024 * 0.75));
  for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 131) % 251;
  const data = bytes.toString('base64');
  const input = `{"data":"${data}","n":${mb}}`;
  return {
    input,
    text: `{"input":${input}${Object.keys(extra).length ? `,${JSON.stringify(extra).slice(1, -1)}` : ''}}`,
  };
}

async function setup(clock = new ManualClock(1_700_000_000_000)) {
  const folder = join(dir, `s${++n}`);
  const store = new SqliteStore({ file: join(folder, 'berth.sqlite') });
  const ctx = await listening({ store, clock });
  const blobFiles = () => readdirSync(join(folder, 'blobs')).sort();
  const post = (path: string, body: string | undefined, headers: Record<string, string> = {}) =>
    fetch(`${ctx.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body }),
    });
  const get = (path: string, token = API_KEY) =>
    fetch(`${ctx.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  return { ...ctx, store, folder, blobFiles, post, get, clock };
}

describe('big inputs and outputs as blob files (SQLite)', () => {
  it('a 3 MB input reaches a blobs worker by reference and its 3 MB output comes back byte-exact', async () => {
    await using t = await setup();
    const w = await ScriptedWorker.connect(t.url, { blobs: true });
    const welcome = await w.next('welcome');
    expect(welcome.blobs).toBe(true);
    const { input, text } = bigBody(3);
    const run = await t.post('/v2/echo/run', text);
    expect(run.status).toBe(200);
    const { id } = (await run.json()) as { id: string };
    const assign = await w.next('job.assign');
    expect(assign.input).toEqual({});
    expect(assign.inputBlob?.size).toBe(Buffer.byteLength(input));
    // The worker fetches the input with its token; an API key is refused.
    expect((await t.get(assign.inputBlob!.url)).status).toBe(401);
    const fetched = await t.get(assign.inputBlob!.url, WORKER_TOKEN);
    expect(fetched.status).toBe(200);
    expect(await fetched.text()).toBe(input);
    expect(t.blobFiles().some((f) => f.startsWith(`${id}~`) && f.endsWith('.in'))).toBe(true);
    // The output is uploaded, then named in job.complete.
    const up = await fetch(`${t.url}/v2/_worker/jobs/${id}/output?attempt=${assign.attempt}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${WORKER_TOKEN}` },
      body: input,
    });
    expect(up.status).toBe(200);
    const { blob, size } = (await up.json()) as { blob: string; size: number };
    expect(size).toBe(Buffer.byteLength(input));
    w.send({ type: 'job.complete', id, attempt: assign.attempt, output: null, outputBlob: blob });
    await w.next('job.ack');
    const status = await t.get(`/v2/echo/status/${id}`);
    const body = await status.text();
    expect(body.startsWith(`{"id":"${id}"`)).toBe(true);
    expect(body).toContain(`"output":${input}`);
    expect(JSON.parse(body).status).toBe('COMPLETED');
    await w.close();
  });

  it('a worker without blobs gets the input inline, the same bytes', async () => {
    await using t = await setup();
    const w = await ScriptedWorker.connect(t.url);
    await w.next('welcome');
    const { input, text } = bigBody(1);
    const run = await t.post('/v2/echo/run', text);
    expect(run.status).toBe(200);
    const assign = await w.next('job.assign');
    expect(JSON.stringify(assign.input)).toBe(input);
    expect(assign.inputBlob).toBeUndefined();
    await w.close();
  });

  it('refuses a body whose bulk is outside input (413, which field), and a body past the limit before reading it all', async () => {
    await using t = await setup();
    const pad = `{"input":{},"pad":[${'{},'.repeat(1_000_000)}{}]}`;
    const res = await t.post('/v2/echo/runsync', pad);
    expect(res.status).toBe(413);
    const err = (await res.json()) as { code: string; error: string };
    expect(err.code).toBe('payload_too_large');
    expect(err.error).toContain('pad');
    // 21 MB streamed without a Content-Length to /runsync (20 MB limit): 413.
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent === 0) c.enqueue(Buffer.from('{"input":{"x":"'));
        if (sent >= 21) return c.close();
        sent++;
        c.enqueue(chunk);
      },
    });
    const cut = await fetch(`${t.url}/v2/echo/runsync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(cut.status).toBe(413);
    await until(() => t.blobFiles().length === 0 || undefined, 2000, 'temp files removed');
  });

  it('purge, ttl and retention remove the blob files with their jobs', async () => {
    await using t = await setup();
    const { text } = bigBody(0.5);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await (await t.post('/v2/echo/run', text)).json()) as { id: string }).id);
    expect(t.blobFiles()).toHaveLength(3);
    // purge: queued jobs go, and their files at the next sweep
    expect((await t.post('/v2/echo/purge-queue', undefined)).status).toBe(200);
    await t.server.sweep();
    expect(t.blobFiles()).toHaveLength(0);
    // ttl: a queued job past its ttl is deleted by the sweep, its file with it
    await t.post('/v2/echo/run', text);
    expect(t.blobFiles()).toHaveLength(1);
    t.clock.advance(25 * 3600_000);
    await t.server.sweep();
    await t.server.sweep();
    expect(t.blobFiles()).toHaveLength(0);
  });

  it('the pull protocol (RunPod job-take / job-done) gets the same bytes and stores a big result as a blob', async () => {
    await using t = await setup();
    const { input, text } = bigBody(2);
    const { id } = (await (await t.post('/v2/echo/run', text)).json()) as { id: string };
    const take = await fetch(`${t.url}/v2/echo/job-take/pw1?gpu=local&job_in_progress=0`, {
      headers: { authorization: WORKER_TOKEN },
    });
    expect(take.status).toBe(200);
    const taken = await take.text();
    expect(taken).toBe(`{"id":"${id}","input":${input}}`);
    // runpod-python posts {"output": ...} with a form content type
    const done = await fetch(`${t.url}/v2/echo/job-done/pw1/${id}?isStream=false`, {
      method: 'POST',
      headers: { authorization: WORKER_TOKEN, 'content-type': 'application/x-www-form-urlencoded' },
      body: `{"output":${input}}`,
    });
    expect(done.status).toBe(200);
    expect(t.blobFiles().filter((f) => f.startsWith(`${id}~`))).toHaveLength(2); // the input and the output
    const body = await (await t.get(`/v2/echo/status/${id}`)).text();
    expect(body).toContain(`"status":"COMPLETED"`);
    expect(body).toContain(`"output":${input}`);
  });

  it('an idempotent retry of a big body answers the same job and keeps one file; another body gets 409', async () => {
    await using t = await setup();
    const { text } = bigBody(0.5);
    const key = { 'idempotency-key': 'big-1' };
    const first = (await (await t.post('/v2/echo/run', text, key)).json()) as { id: string };
    const again = await t.post('/v2/echo/run', text, key);
    expect(again.status).toBe(200);
    expect(((await again.json()) as { id: string }).id).toBe(first.id);
    const other = await t.post('/v2/echo/run', bigBody(0.6).text, key);
    expect(other.status).toBe(409);
    expect(t.blobFiles()).toHaveLength(1);
  });
});
