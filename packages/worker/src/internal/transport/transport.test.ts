import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';
import { SDK_VERSION } from './version.js';
import { WORKER_ID_RE, defaultWorkerId } from './worker-id.js';

describe('backoffDelay', () => {
  const opts = { initialMs: 250, maxMs: 10_000 };
  it('doubles from the initial delay up to the cap, jittered into the upper half', () => {
    expect(backoffDelay(0, opts, () => 0)).toBe(125);
    expect(backoffDelay(0, opts, () => 1)).toBe(250);
    expect(backoffDelay(3, opts, () => 1)).toBe(2000);
    expect(backoffDelay(10, opts, () => 1)).toBe(10_000);
    expect(backoffDelay(1000, opts, () => 0)).toBe(5000);
  });
});

describe('worker id and version', () => {
  it('default worker id is <hostname>-<pid>-<random4> and valid on the wire', () => {
    expect(defaultWorkerId('my host!', 42)).toMatch(/^my-host--42-[0-9a-f]{4}$/);
    expect(WORKER_ID_RE.test(defaultWorkerId('x'.repeat(300), 1))).toBe(true);
  });

  it('SDK_VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
