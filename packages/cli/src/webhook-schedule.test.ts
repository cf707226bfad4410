import { describe, expect, it } from 'vitest';
import { resolveServerOptions } from '@berth/server';
import { parseDevArgs } from './commands/dev.js';
import { parseServeArgs } from './commands/serve.js';
import { ConfigError } from '@berth/protocol';
import { resolveConfig } from './config/resolve.js';
import { UsageError } from './internal/usage-error.js';
import { webhookOptions } from './webhook-schedule.js';

const retriesOf = (o: ReturnType<typeof webhookOptions>) => resolveServerOptions({ webhooks: o }).webhooks;

describe('webhook retry schedule from flags and config', () => {
  it('--webhook-retries on dev and serve; absent: undefined (the default 2 applies)', () => {
    expect(parseDevArgs(['--webhook-retries', '8'], {}).webhookRetries).toBe(8);
    expect(parseServeArgs(['--webhook-retries=0'], {}).webhookRetries).toBe(0);
    expect(parseServeArgs([], {}).webhookRetries).toBeUndefined();
    for (const bad of ['-1', '101', '2.5', 'many'])
      expect(() => parseServeArgs(['--webhook-retries', bad], {})).toThrow(UsageError);
  });

  it("defaults to RunPod's 2 retries 10 s apart; the config sets an exponential schedule; the flag wins on the count", () => {
    expect(retriesOf(webhookOptions({ allow: ['loopback'] }, undefined, undefined))).toMatchObject({
      attempts: 3,
      retryDelayMs: 10_000,
      retryBackoff: 1,
      allow: ['loopback'],
    });
    const config = resolveConfig(
      {
        endpoints: { echo: { worker: './echo.ts' } },
        webhooks: { retries: 10, retryDelayMs: 5_000, retryBackoff: 2, maxRetryDelayMs: 1_800_000 },
      },
      '/tmp/berth.config.json',
    );
    expect(retriesOf(webhookOptions({}, config.webhooks, undefined))).toMatchObject({
      attempts: 11,
      retryDelayMs: 5_000,
      retryBackoff: 2,
      maxRetryDelayMs: 1_800_000,
    });
    expect(retriesOf(webhookOptions({}, config.webhooks, 4)).attempts).toBe(5);
  });

  it('refuses a bad webhooks section, naming the field', () => {
    const problems = (webhooks: unknown): string[] => {
      try {
        resolveConfig({ endpoints: { echo: { worker: './echo.ts' } }, webhooks }, '/tmp/berth.config.json');
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as ConfigError).problems;
      }
      throw new Error('expected a ConfigError');
    };
    expect(problems({ retries: 1000 })).toEqual(['webhooks.retries: must be at most 100 (got 1000)']);
    expect(problems({ retryBackof: 2 })).toEqual([
      'webhooks: unknown field "retryBackof" (known: retries, retryDelayMs, retryBackoff, maxRetryDelayMs)',
    ]);
    expect(problems({ retryBackoff: 0.5 })[0]).toMatch(/^webhooks\.retryBackoff: /);
  });
});
