// Webhooks, stored API keys and scopes through the real `berth dev` binary and `berth keys` on one data folder.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO_ROOT, pollUntil, startBerthDev, type BerthDev } from './harness.test-helpers.js';

const dataDir = mkdtempSync(join(tmpdir(), 'berth-e2e-edges-'));
const secret = `whsec_${randomBytes(32).toString('base64')}`;
const hits: { headers: IncomingHttpHeaders; body: string }[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    hits.push({ headers: req.headers, body });
    res.writeHead(204).end();
  });
});
let hookUrl = '';
let berth: BerthDev;

/** `berth keys ...` as a real process on the test's data folder. */
function keys(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'keys', ...args, '--data-dir', dataDir], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(async () => {
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  // SQLite store in the test's data folder (the default store), webhooks signed; dev allows loopback targets.
  berth = await startBerthDev({
    args: ['--data-dir', dataDir],
    env: { BERTH_WEBHOOK_SECRET: secret },
    waitForWorkers: ['echo'],
  });
});
afterAll(async () => {
  await berth?.[Symbol.asyncDispose]();
  await new Promise<void>((r) => receiver.close(() => r()));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('berth dev: webhooks and stored keys', () => {
  it('a completed job is POSTed, signed, to a loopback receiver (allowed by default in dev); the delivery log shows it', async () => {
    const r = await berth.json('/v2/echo/runsync', {
      method: 'POST',
      body: JSON.stringify({ input: { hello: 'hook' }, webhook: hookUrl }),
    });
    expect(r.body.status).toBe('COMPLETED');
    const id: string = r.body.id;
    await pollUntil(
      async () => hits.length,
      (n) => n >= 1,
      10_000,
    );
    const payload = new Webhook(secret).verify(hits[0]!.body, hits[0]!.headers as Record<string, string>) as Record<
      string,
      unknown
    >;
    expect(payload).toMatchObject({ id, status: 'COMPLETED', input: { hello: 'hook' }, webhook: hookUrl });
    const log = await pollUntil(
      () => berth.json(`/v2/echo/webhooks/${id}`),
      (l) => l.body?.deliveries?.[0]?.state === 'delivered',
      10_000,
    );
    expect(log.body.deliveries[0].attempts[0].status).toBe(204);
  });

  it('berth keys create/revoke on the same data folder: scopes enforced by the running server, revocation at once', async () => {
    const created = keys('create', '--name', 'e2e', '--endpoints', 'echo', '--read-only');
    expect(created.code, created.err).toBe(0);
    const key = created.out.trim();
    const as = { headers: { authorization: `Bearer ${key}` } };
    expect((await berth.json('/v2/echo/health', as)).status).toBe(200);
    const write = await berth.json('/v2/echo/run', { method: 'POST', body: '{"input":{}}', ...as });
    expect(write).toMatchObject({ status: 403, body: { code: 'key_read_only' } });
    expect((await berth.json('/v2/stream/health', as)).body.code).toBe('key_endpoint_not_allowed');
    expect(keys('list').out).toContain('echo, read-only');
    expect(keys('revoke', key.slice(9, 21)).code).toBe(0);
    expect((await berth.json('/v2/echo/health', as)).status).toBe(401);
  });
});
