import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../clock.js';
import { silentLogger } from '@berth/protocol/log';
import { FileStore } from './file-store.js';
import { API_KEY, ScriptedWorker, WORKER_TOKEN, call, listening } from '../testing.test-helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-files-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const DAY = 24 * 3600_000;

/** A running job on a scripted worker, so uploads for it are accepted. */
async function runningJob(url: string, server: Parameters<typeof call>[0]) {
  const worker = await ScriptedWorker.connect(url);
  await worker.next('welcome');
  const { body } = await call(server, 'POST', '/v2/echo/run', { body: { input: { n: 1 } } });
  const assign = await worker.next('job.assign');
  expect(assign.id).toBe(body.id);
  return { worker, jobId: body.id as string };
}

const upload = (
  url: string,
  jobId: string,
  data: Uint8Array,
  init: { type?: string; token?: string; ext?: string } = {},
) =>
  fetch(`${url}/v2/_worker/files/${jobId}?ext=${init.ext ?? 'png'}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${init.token ?? WORKER_TOKEN}`, 'content-type': init.type ?? 'image/png' },
    body: data,
  });

describe('control-plane output files', () => {
  it('a worker uploads, anyone with the signed URL downloads the same bytes with the Content-Type; 7 days later it is refused and deleted', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const dir = join(tmp, 'a');
    await using s = await listening({ clock, filesDir: dir });
    const { worker, jobId } = await runningJob(s.url, s.server);
    const data = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7) & 255);
    const res = await upload(s.url, jobId, data);
    expect(res.status).toBe(200);
    const out = (await res.json()) as { url: string; expiresAt: string };
    expect(out.expiresAt).toBe(new Date(clock.now() + 7 * DAY).toISOString());
    const u = new URL(out.url);
    expect(`${u.protocol}//${u.host}`).toBe(s.url);
    expect(u.pathname).toMatch(/^\/files\/[0-9a-f]{32}\.png$/);

    const got = await fetch(out.url); // no API key needed: the signature is the credential
    expect(got.status).toBe(200);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await got.arrayBuffer()).equals(Buffer.from(data))).toBe(true);

    clock.advance(7 * DAY - 1000);
    expect((await fetch(out.url)).status).toBe(200);
    clock.advance(1000);
    const expired = await fetch(out.url);
    expect(expired.status).toBe(403);
    expect(await expired.json()).toMatchObject({ code: 'file_url_expired' });
    expect(readdirSync(dir).filter((f) => f.endsWith('.png'))).toHaveLength(1);
    await s.server.sweep();
    expect(readdirSync(dir).filter((f) => f.endsWith('.png'))).toHaveLength(0);
    await worker.close();
  });

  it('a tampered signature, name or expiry is refused with file_signature_invalid', async () => {
    await using s = await listening({ filesDir: join(tmp, 'b') });
    const { worker, jobId } = await runningJob(s.url, s.server);
    const out = (await (await upload(s.url, jobId, new Uint8Array([1, 2, 3]))).json()) as { url: string };
    const u = new URL(out.url);
    const sig = u.searchParams.get('sig')!;
    const variants = [
      out.url.replace(`sig=${sig}`, `sig=${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`),
      out.url.replace(/expires=(\d+)/, (_, e: string) => `expires=${Number(e) + 3600}`),
      out.url.replace(/\/files\/([0-9a-f])/, (_, c: string) => `/files/${c === '0' ? '1' : '0'}`),
      `${u.origin}${u.pathname}`,
    ].filter((v) => v !== out.url);
    expect(variants).toHaveLength(4);
    for (const v of variants) {
      const r = await fetch(v);
      expect(r.status, v).toBe(403);
      expect(await r.json()).toMatchObject({ code: 'file_signature_invalid' });
    }
    expect((await fetch(out.url)).status).toBe(200);
    await worker.close();
  });

  it('only workers with a token may upload, only for running jobs, only servable types, within the size limit', async () => {
    await using s = await listening({ filesDir: join(tmp, 'c'), maxFileBytes: 1000 });
    const { worker, jobId } = await runningJob(s.url, s.server);
    const r401 = await upload(s.url, jobId, new Uint8Array(10), { token: API_KEY });
    expect([r401.status, ((await r401.json()) as { code: string }).code]).toEqual([401, 'unauthorized']);
    const r404 = await upload(s.url, 'not-a-running-job', new Uint8Array(10));
    expect([r404.status, ((await r404.json()) as { code: string }).code]).toEqual([404, 'job_not_found']);
    const r415 = await upload(s.url, jobId, new Uint8Array(10), { type: 'text/html' });
    expect([r415.status, ((await r415.json()) as { code: string }).code]).toEqual([415, 'unsupported_media_type']);
    const r400 = await upload(s.url, jobId, new Uint8Array(10), { ext: 'p.ng' });
    expect(r400.status).toBe(400);
    const r413 = await upload(s.url, jobId, new Uint8Array(1001));
    const b413 = (await r413.json()) as { code: string; error: string };
    expect([r413.status, b413.code]).toEqual([413, 'payload_too_large']);
    expect(b413.error).toContain('1000 bytes');
    expect((await upload(s.url, jobId, new Uint8Array(1000))).status).toBe(200);
    // Once the job is finished, its worker can no longer store files for it.
    worker.send({ type: 'job.complete', id: jobId, attempt: 1, output: { ok: true } });
    await new Promise((r) => setTimeout(r, 50));
    expect((await upload(s.url, jobId, new Uint8Array(10))).status).toBe(404);
    await worker.close();
  });

  it('URLs survive a restart on the same folder (the signing secret is kept there); a temp folder is removed by close()', async () => {
    const dir = join(tmp, 'd');
    let url: string;
    {
      await using s = await listening({ filesDir: dir });
      const { worker, jobId } = await runningJob(s.url, s.server);
      url = (
        (await (await upload(s.url, jobId, new Uint8Array([9, 9]), { type: 'image/webp', ext: 'webp' })).json()) as {
          url: string;
        }
      ).url;
      await worker.close();
    }
    await using s2 = await listening({ filesDir: dir });
    const moved = new URL(url);
    const again = await fetch(`${s2.url}${moved.pathname}${moved.search}`);
    expect(again.status).toBe(200);
    expect(again.headers.get('content-type')).toBe('image/webp');

    const store = new FileStore({ dir: undefined, ttlMs: DAY, clock: new ManualClock(), logger: silentLogger });
    await store.put('j', 'png', 'image/png', new Uint8Array([1]));
    expect(existsSync(store.dir)).toBe(true);
    store.close();
    expect(existsSync(store.dir)).toBe(false);
  });
});
