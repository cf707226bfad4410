import { resolveServerOptions, silentLogger } from '@berth/server';
import { describe, expect, it } from 'vitest';
import { EDGE_ENV_HELP, edgeServerOptions } from './edge-options.js';

describe('EDGE_ENV_HELP', () => {
  it("states the server's real defaults for the in-flight body budget and the connection cap", () => {
    const real = resolveServerOptions({ logger: silentLogger });
    const defaultOf = (name: string) => {
      const after = EDGE_ENV_HELP.slice(EDGE_ENV_HELP.indexOf(name));
      return Number(/\(default (\d+)/.exec(after)?.[1]);
    };
    expect(defaultOf('BERTH_MAX_BODY_BYTES_IN_FLIGHT')).toBe(real.maxBodyBytesInFlight);
    expect(EDGE_ENV_HELP).toContain(`${real.maxBodyBytesInFlight / 2 ** 20} MiB`);
    expect(defaultOf('BERTH_MAX_CONNECTIONS')).toBe(real.maxConnections);
  });
});

describe('edgeServerOptions: rateLimits from the config file and BERTH_RATE_LIMITS', () => {
  const file = { base: { run: 5000, cancel: 10 }, perWorker: 100 };

  it("takes the config file's rateLimits; on/off switches them over it", () => {
    expect(edgeServerOptions({}, 'serve', file).rateLimits).toEqual({ enabled: true, ...file });
    expect(edgeServerOptions({ BERTH_RATE_LIMITS: 'off' }, 'serve', file).rateLimits).toEqual({
      enabled: false,
      ...file,
    });
    expect(edgeServerOptions({ BERTH_RATE_LIMITS: 'ON' }, 'dev', { enabled: false }).rateLimits).toEqual({
      enabled: true,
    });
    expect(edgeServerOptions({}, 'serve').rateLimits).toEqual({ enabled: true });
  });

  it('a JSON object is merged over the file: base operation by operation, perWorker replaced', () => {
    const env = { BERTH_RATE_LIMITS: ' {"base":{"run":7,"status":9},"perWorker":0} ' };
    expect(edgeServerOptions(env, 'serve', file).rateLimits).toEqual({
      enabled: true,
      base: { run: 7, cancel: 10, status: 9 },
      perWorker: 0,
    });
    expect(edgeServerOptions({ BERTH_RATE_LIMITS: '{"enabled":false}' }, 'serve').rateLimits).toEqual({
      enabled: false,
    });
  });

  it.each([
    ['maybe', /BERTH_RATE_LIMITS must be on, off or a JSON object .*got "maybe"/],
    ['{"base":', /BERTH_RATE_LIMITS .*not valid JSON/],
    ['{"base":{"runn":5}}', /BERTH_RATE_LIMITS .*rateLimits\.base: unknown operation "runn" \(known: runsync, run, /],
    ['{"base":{"run":-1}}', /BERTH_RATE_LIMITS .*rateLimits\.base\.run must be a whole number >= 0, got -1/],
    [
      '{"perworker":5}',
      /BERTH_RATE_LIMITS .*rateLimits: unknown field "perworker" \(known: enabled, base, perWorker\)/,
    ],
    ['{"enabled":"no"}', /BERTH_RATE_LIMITS .*rateLimits\.enabled must be true or false/],
  ])('BERTH_RATE_LIMITS=%s is a usage error naming the problem', (value, message) => {
    expect(() => edgeServerOptions({ BERTH_RATE_LIMITS: value }, 'serve')).toThrow(message);
  });
});

describe('edgeServerOptions: BERTH_TRUST_TRACEPARENT', () => {
  it('off distrusts incoming trace context, on trusts it, unset leaves the server default; anything else is refused', () => {
    expect(edgeServerOptions({ BERTH_TRUST_TRACEPARENT: 'off' }, 'serve').trustTraceparent).toBe(false);
    expect(edgeServerOptions({ BERTH_TRUST_TRACEPARENT: ' ON ' }, 'dev').trustTraceparent).toBe(true);
    expect(edgeServerOptions({}, 'serve')).not.toHaveProperty('trustTraceparent');
    expect(() => edgeServerOptions({ BERTH_TRUST_TRACEPARENT: 'false' }, 'serve')).toThrow(
      'BERTH_TRUST_TRACEPARENT must be on or off (got "false")',
    );
  });
});
