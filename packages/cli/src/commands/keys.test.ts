import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, silentLogger } from '@berth/server';
import { SqliteKeyStore, SqliteStore } from '@berth/server/sqlite';
import { WorkerAuth } from '../../../server/src/keys/worker-auth.js';
import { afterAll, describe, expect, it } from 'vitest';
import { runBerth } from '../internal/run-berth.test-helpers.js';
import { edgeServerOptions } from '../edge-options.js';

const dir = mkdtempSync(join(tmpdir(), 'berth-cli-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const berth = (...argv: string[]) => runBerth(argv, {}, dir);

describe('berth keys', () => {
  it('create prints the key once, list shows scopes without secrets, revoke refuses it on a server sharing the file', async () => {
    const full = await berth('keys', 'create', '--name', 'ci', '--data-dir', 'data');
    expect(full.code).toBe(0);
    const secret = full.out.trim();
    expect(secret).toMatch(/^berth_sk_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(full.err).toMatch(/only time the key is shown/);
    const ro = await berth('keys', 'create', '--endpoints', 'echo,other', '--read-only', '--data-dir', 'data');
    expect(ro.code).toBe(0);

    const list = await berth('keys', 'list', '--data-dir', 'data');
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/^ID\s+KIND\s+NAME\s+SCOPE\s+CREATED\s+REVOKED/);
    expect(list.out).toContain('all endpoints');
    expect(list.out).toContain('echo,other, read-only');
    expect(list.out).not.toContain(secret.slice(22));

    // A server on the same database file (as berth serve opens it) accepts the key until it is revoked.
    const store = new SqliteStore({ file: join(dir, 'data', 'berth.sqlite') });
    const server = createServer({
      store,
      keyStore: new SqliteKeyStore(store.db),
      endpoints: ['echo'],
      logger: silentLogger,
      sweepIntervalMs: 0,
    });
    const health = () =>
      server.handle({
        method: 'GET',
        path: '/v2/echo/health',
        query: new URLSearchParams(),
        headers: { authorization: `Bearer ${secret}` },
      });
    expect((await health()).status).toBe(200);
    const id = secret.slice(9, 21);
    const revoked = await berth('keys', 'revoke', id, '--data-dir', 'data');
    expect(revoked).toMatchObject({ code: 0, out: `Revoked key ${id}.\n` });
    expect((await health()).status).toBe(401);
    expect((await berth('keys', 'revoke', id, '--data-dir', 'data')).code).toBe(1);
    expect((await berth('keys', 'revoke', 'nope', '--data-dir', 'data')).err).toMatch(/no key nope/);
    await server.close({ drainMs: 0 });
  });

  it('create --worker prints a worker token for its endpoints, list shows its kind, the worker check of a control plane reads it', async () => {
    const made = await berth(
      'keys',
      'create',
      '--worker',
      '--endpoint',
      'echo',
      '--name',
      'gpu-pool',
      '--data-dir',
      'wk',
    );
    expect(made.code).toBe(0);
    const token = made.out.trim();
    expect(token).toMatch(/^berth_wk_[a-z0-9]{12}_[A-Za-z0-9_-]{43}$/);
    expect(made.err).toMatch(/worker token .* \(echo\).*BERTH_WORKER_TOKEN/s);
    const list = await berth('keys', 'list', '--data-dir', 'wk');
    expect(list.out).toMatch(/\sworker\s+gpu-pool\s+echo\s/);
    const keyStore = new SqliteKeyStore(join(dir, 'wk', 'berth.sqlite')); // as a control plane on that folder reads it
    const auth = new WorkerAuth([], keyStore);
    expect(await auth.authenticateWorker(token, 'echo')).toMatchObject({ endpoints: ['echo'] });
    expect(await auth.authenticateWorker(token, 'other')).toBeNull();
    expect((await berth('keys', 'revoke', token.slice(9, 21), '--data-dir', 'wk')).code).toBe(0);
    expect(await auth.authenticateWorker(token, 'echo')).toBeNull();
    await keyStore.close();
    for (const argv of [['--worker'], ['--worker', '--endpoints', 'echo', '--read-only']]) {
      const r = await berth('keys', 'create', ...argv, '--data-dir', 'wk');
      expect(r.code, argv.join(' ')).toBe(2);
    }
  });

  it('usage errors exit 2 with a pointer to help', async () => {
    for (const argv of [
      ['keys', 'bogus'],
      ['keys', 'revoke'],
      ['keys', 'create', '--endpoints', 'Bad_Id'],
      ['keys', 'list', '--read-only'],
      ['keys', 'create', '--nope'],
    ]) {
      const r = await berth(...argv);
      expect(r.code, argv.join(' ')).toBe(2);
      expect(r.err).toMatch(/berth keys --help/);
    }
    expect((await berth('keys')).code).toBe(2);
    expect((await berth('keys', '--help')).out).toMatch(/Usage: berth keys/);
  });
});

describe('edgeServerOptions', () => {
  it('dev allows loopback webhooks by default, serve nothing; env overrides; off switch; bad values are usage errors', () => {
    expect(edgeServerOptions({}, 'dev')).toEqual({ webhooks: { allow: ['loopback'] }, rateLimits: { enabled: true } });
    expect(edgeServerOptions({}, 'serve')).toEqual({ webhooks: { allow: [] }, rateLimits: { enabled: true } });
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(
      edgeServerOptions(
        { BERTH_WEBHOOK_ALLOW: 'private,loopback', BERTH_WEBHOOK_SECRET: secret, BERTH_RATE_LIMITS: 'off' },
        'serve',
      ),
    ).toEqual({
      webhooks: { allow: ['private', 'loopback'], secret },
      rateLimits: { enabled: false },
    });
    expect(edgeServerOptions({ BERTH_WEBHOOK_ALLOW: 'none' }, 'dev').webhooks).toEqual({ allow: [] });
    expect(() => edgeServerOptions({ BERTH_WEBHOOK_ALLOW: 'everything' }, 'dev')).toThrow(/BERTH_WEBHOOK_ALLOW/);
    expect(() => edgeServerOptions({ BERTH_WEBHOOK_SECRET: 'hunter2' }, 'dev')).toThrow(/BERTH_WEBHOOK_SECRET/);
    expect(() => edgeServerOptions({ BERTH_RATE_LIMITS: 'maybe' }, 'dev')).toThrow(/BERTH_RATE_LIMITS/);
    expect(
      edgeServerOptions({ BERTH_MAX_BODY_BYTES_IN_FLIGHT: '5000000', BERTH_MAX_CONNECTIONS: '200' }, 'serve'),
    ).toMatchObject({ maxBodyBytesInFlight: 5_000_000, maxConnections: 200 });
    expect(() => edgeServerOptions({ BERTH_MAX_CONNECTIONS: 'lots' }, 'serve')).toThrow(/BERTH_MAX_CONNECTIONS/);
    const jobTokenSecret = 'a-long-enough-job-token-secret';
    expect(edgeServerOptions({ BERTH_JOB_TOKEN_SECRET: jobTokenSecret }, 'serve').jobTokenSecret).toBe(jobTokenSecret);
    expect(() => edgeServerOptions({ BERTH_JOB_TOKEN_SECRET: 'short' }, 'serve')).toThrow(/BERTH_JOB_TOKEN_SECRET/);
  });
});
