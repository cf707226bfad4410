import { BerthError, toErrorBody } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { ConfigError, DuplicateJobError, MissingDependencyError, StoreUnavailableError } from './errors.js';
import { resolveServerOptions } from './options.js';
import { MemoryStore } from './store/memory/memory-store.js';
import type { ClusterBus } from './cluster/types.js';
import type { Store } from './store/types.js';

/** The ConfigError `resolveServerOptions` throws for `o` (fails the test if it throws anything else or nothing). */
function configError(o: Parameters<typeof resolveServerOptions>[0]): ConfigError {
  try {
    resolveServerOptions(o);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('no error thrown');
}

describe('server errors', () => {
  it('each typed error passes `cause` (ES2022 ErrorOptions) through; the wire body never carries it', () => {
    const inner = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const down = new StoreUnavailableError('the database cannot be reached', { cause: inner });
    expect(down.cause).toBe(inner);
    expect(down).toBeInstanceOf(BerthError);
    expect(toErrorBody(down).body).toEqual({ error: 'the database cannot be reached', code: 'unavailable' });
    expect(new DuplicateJobError('j1', { cause: inner }).cause).toBe(inner);
    expect(new MissingDependencyError('pg', 'install pg', { cause: inner }).cause).toBe(inner);
    expect(new ConfigError('option x', { cause: inner }).cause).toBe(inner);
    expect('cause' in new StoreUnavailableError('x')).toBe(false);
  });

  it('a bad option, of the server or one of its parts, is a ConfigError naming the option and the value (400 invalid_request)', () => {
    expect(configError({ heartbeatMs: -5 }).message).toBe('option heartbeatMs must be a non-negative number, got -5');
    expect(configError({ pullHoldMs: 50 }).message).toBe('option pullHoldMs must be between 100 and 80000 ms, got 50');
    expect(configError({ endpoints: ['Bad Id'] }).message).toContain('option endpoints: "Bad Id"');
    expect(configError({ rateLimits: { perWorker: -1 } }).message).toContain('option rateLimits.perWorker');
    expect(configError({ webhooks: { allow: ['moon' as never] } }).message).toContain('option webhooks.allow');
    expect(configError({ httpTimeouts: { headersMs: 0 } }).message).toContain('option httpTimeouts.headersMs');
    expect(configError({ models: { 'Bad Slug': { endpoint: 'e', kind: 'image' } } }).message).toContain('Bad Slug');
    expect(new ConfigError('x')).toBeInstanceOf(BerthError); // so every existing `instanceof BerthError` check still holds
    expect(toErrorBody(new ConfigError('option x must be y'))).toEqual({
      status: 400,
      body: { error: 'option x must be y', code: 'invalid_request' },
    });
  });

  it('StoreUnavailableError is 503 unavailable on the wire and keeps its cause', () => {
    const cause = new Error('ECONNREFUSED');
    const err = new StoreUnavailableError('the database is unreachable; retry shortly', { cause });
    expect(err.cause).toBe(cause);
    expect(toErrorBody(err)).toEqual({
      status: 503,
      body: { error: 'the database is unreachable; retry shortly', code: 'unavailable' },
    });
  });
});

describe('cluster wiring', () => {
  const bus: ClusterBus = {
    replicaId: 'r1',
    publish: () => {},
    onMessage: () => {},
    onResync: () => {},
    start: async () => {},
    close: async () => {},
  };

  it('uses the channel the store offers (Store.clusterBus), none for a store without one, none with cluster: false', () => {
    const shared = Object.assign(new MemoryStore(), { clusterBus: () => bus }) as Store;
    expect(resolveServerOptions({ store: shared }).cluster).toBe(bus);
    expect(resolveServerOptions({ store: shared, cluster: false }).cluster).toBeUndefined();
    expect(resolveServerOptions({ store: new MemoryStore() }).cluster).toBeUndefined();
    const other: ClusterBus = { ...bus, replicaId: 'r2' };
    expect(resolveServerOptions({ store: shared, cluster: other }).cluster).toBe(other);
  });
});
