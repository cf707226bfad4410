// berth serve's edge settings through the real binary: the unsigned-webhook warning, rate limits from
// berth.config.json and BERTH_RATE_LIMITS, and the help's stated defaults.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from './harness.test-helpers.js';

const KEY = 'berth_serve_edge_key';
const tmp = mkdtempSync(join(tmpdir(), 'berth-serve-edge-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Serve {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function serve(args: string[], env: NodeJS.ProcessEnv = {}): Serve {
  const base: NodeJS.ProcessEnv = { ...process.env, BERTH_API_KEY: KEY, NO_COLOR: '1' };
  delete base['BERTH_WEBHOOK_SECRET'];
  delete base['BERTH_RATE_LIMITS'];
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--store', 'memory', ...args], {
    cwd: tmp,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, exited };
}

/** Waits for the banner's last line; answers the URL. */
async function ready(s: Serve): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (!s.out().includes('Press Ctrl-C to stop.')) {
    if (Date.now() > deadline || s.child.exitCode !== null) throw new Error(`not ready:\n${s.out()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return /berth ready at (http:\/\/[^\s"()]+)/.exec(s.out())![1]!;
}

async function stop(s: Serve): Promise<void> {
  if (s.child.exitCode === null) s.child.kill('SIGTERM');
  await s.exited;
}

/**
 * The statuses of `n` purge-queue calls, one after the other, all in one rate-limit window (limits count per key x
 * endpoint x operation in fixed 10 s slices of the clock; a run that straddles two, a loaded machine's slow first
 * answer, is made again in the next window, where the counts start from zero).
 */
async function purges(url: string, n: number): Promise<{ status: number; limit?: number }[]> {
  for (let attempt = 1; ; attempt++) {
    const inWindow = Date.now() % 10_000;
    if (inWindow > 7_000) await new Promise((r) => setTimeout(r, 10_100 - inWindow));
    const window = Math.floor(Date.now() / 10_000);
    const out: { status: number; limit?: number }[] = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${url}/v2/echo/purge-queue`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}` },
      });
      const body = (await res.json()) as { details?: { limit?: number } };
      out.push(res.status === 429 ? { status: 429, limit: body.details?.limit ?? -1 } : { status: res.status });
    }
    if (Math.floor(Date.now() / 10_000) === window || attempt === 3) return out;
    await new Promise((r) => setTimeout(r, 10_100 - (Date.now() % 10_000))); // the next window, fresh counts
  }
}

function config(rateLimits: unknown): string {
  const f = join(tmp, `berth.config.${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(f, JSON.stringify({ endpoints: { echo: { worker: './echo.ts', workers: 0 } }, rateLimits }));
  return f;
}

describe('berth serve: unsigned webhooks', () => {
  it('warns once at start without BERTH_WEBHOOK_SECRET, not at all with one', { timeout: 40_000 }, async () => {
    const unsigned = serve(['--endpoint', 'echo']);
    const signed = serve(['--endpoint', 'echo'], {
      BERTH_WEBHOOK_SECRET: `whsec_${Buffer.alloc(32, 9).toString('base64')}`,
    });
    try {
      await Promise.all([ready(unsigned), ready(signed)]);
      const warnings = unsigned.out().match(/webhooks are unsigned[^\n]*/g) ?? [];
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/BERTH_WEBHOOK_SECRET=whsec_/);
      expect(signed.out()).not.toMatch(/unsigned/);
    } finally {
      await Promise.all([stop(unsigned), stop(signed)]);
    }
  });
});

describe('berth serve: rate limits', () => {
  it('takes "rateLimits" from berth.config.json, and BERTH_RATE_LIMITS (JSON) over it', {
    timeout: 40_000,
  }, async () => {
    const file = config({ base: { 'purge-queue': 1 } });
    const fromFile = serve(['--config', file]);
    const overridden = serve(['--config', file], { BERTH_RATE_LIMITS: '{"base":{"purge-queue":3}}' });
    try {
      const [a, b] = await Promise.all([ready(fromFile), ready(overridden)]);
      expect(await purges(a, 2)).toEqual([{ status: 200 }, { status: 429, limit: 1 }]);
      expect(await purges(b, 4)).toEqual([
        { status: 200 },
        { status: 200 },
        { status: 200 },
        { status: 429, limit: 3 },
      ]);
    } finally {
      await Promise.all([stop(fromFile), stop(overridden)]);
    }
  });

  it("BERTH_RATE_LIMITS=off turns the config file's limits off", { timeout: 30_000 }, async () => {
    const s = serve(['--config', config({ base: { 'purge-queue': 1 } })], { BERTH_RATE_LIMITS: 'off' });
    try {
      expect(await purges(await ready(s), 3)).toEqual([{ status: 200 }, { status: 200 }, { status: 200 }]);
    } finally {
      await stop(s);
    }
  });

  it('a bad rateLimits in the file, or in BERTH_RATE_LIMITS, stops the start with exit code 2 naming it', {
    timeout: 30_000,
  }, async () => {
    const badFile = serve(['--config', config({ base: { purge: 1 } })]);
    const badEnv = serve(['--endpoint', 'echo'], { BERTH_RATE_LIMITS: '{"perworker":5}' });
    expect(await badFile.exited).toBe(2);
    expect(badFile.out()).toMatch(/rateLimits\.base: unknown operation "purge" \(known: runsync, run, /);
    expect(await badEnv.exited).toBe(2);
    expect(badEnv.out()).toMatch(/BERTH_RATE_LIMITS .*unknown field "perworker" \(known: enabled, base, perWorker\)/);
  });
});

describe('berth serve --help', () => {
  it('states the real default of the in-flight body budget (256 MiB)', { timeout: 20_000 }, async () => {
    const s = serve(['--help']);
    expect(await s.exited).toBe(0);
    expect(s.out()).toMatch(
      /BERTH_MAX_BODY_BYTES_IN_FLIGHT\s+bytes of request bodies held at once; past it 503 overloaded \(default 268435456,\s+256 MiB\)/,
    );
    expect(s.out()).not.toContain('104857600');
  });
});
