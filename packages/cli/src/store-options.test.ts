import { describe, expect, it } from 'vitest';
import { dataLine, parseStoreArgs } from './store-options.js';

describe('store flags', () => {
  it('defaults to SQLite in ./.berth with durability normal', () => {
    expect(parseStoreArgs('serve', {}, {}, '/srv/app')).toEqual({ kind: 'sqlite', durability: 'normal', dataDir: '/srv/app/.berth', maxAttempts: undefined, workerGraceMs: undefined });
  });

  it('takes flags over environment', () => {
    const env = { BERTH_STORE: 'memory', BERTH_DATA_DIR: '/env', BERTH_DURABILITY: 'full' };
    expect(parseStoreArgs('dev', {}, env, '/x')).toMatchObject({ kind: 'memory', dataDir: '/env', durability: 'full' });
    expect(parseStoreArgs('dev', { store: 'sqlite', 'data-dir': 'd', durability: 'normal', 'max-attempts': '5', 'worker-grace-ms': '0' }, env, '/x')).toEqual({
      kind: 'sqlite',
      dataDir: '/x/d',
      durability: 'normal',
      maxAttempts: 5,
      workerGraceMs: 0,
    });
  });

  it.each([
    [{ store: 'redis' }, /--store must be sqlite or memory \(got "redis"\)/],
    [{ durability: 'extra' }, /--durability must be normal or full/],
    [{ 'data-dir': ' ' }, /--data-dir must not be empty/],
    [{ 'max-attempts': '0' }, /--max-attempts must be a whole number >= 1 \(got "0"\)/],
    [{ 'worker-grace-ms': '-5' }, /--worker-grace-ms must be a whole number >= 0/],
  ])('refuses %o with a message naming the flag', (flags, message) => {
    expect(() => parseStoreArgs('serve', flags, {}, '/x')).toThrow(message);
  });

  it('prints what was recovered only when there was something', () => {
    expect(dataLine('/d/berth.sqlite (SQLite)', { queued: 0, running: 0 })).toBe('Data: /d/berth.sqlite (SQLite)');
    expect(dataLine('/d/berth.sqlite (SQLite)', { queued: 3, running: 1 })).toBe('Data: /d/berth.sqlite (SQLite); recovered 3 queued and 1 running jobs');
  });
});
