import { describe, expect, it } from 'vitest';
import { dataLine, parseStoreArgs, redactUrl } from './store-options.js';

describe('store flags', () => {
  it('defaults to SQLite in ./.berth with durability normal', () => {
    expect(parseStoreArgs('serve', {}, {}, '/srv/app')).toEqual({
      kind: 'sqlite',
      durability: 'normal',
      dataDir: '/srv/app/.berth',
      databaseUrl: undefined,
      databaseSchema: 'berth',
      maxAttempts: undefined,
      workerGraceMs: undefined,
    });
  });

  it('takes flags over environment', () => {
    const env = { BERTH_STORE: 'memory', BERTH_DATA_DIR: '/env', BERTH_DURABILITY: 'full' };
    expect(parseStoreArgs('dev', {}, env, '/x')).toMatchObject({ kind: 'memory', dataDir: '/env', durability: 'full' });
    expect(
      parseStoreArgs(
        'dev',
        { store: 'sqlite', 'data-dir': 'd', durability: 'normal', 'max-attempts': '5', 'worker-grace-ms': '0' },
        env,
        '/x',
      ),
    ).toEqual({
      kind: 'sqlite',
      dataDir: '/x/d',
      durability: 'normal',
      databaseUrl: undefined,
      databaseSchema: 'berth',
      maxAttempts: 5,
      workerGraceMs: 0,
    });
  });

  it.each([
    [{ store: 'redis' }, /--store must be sqlite, postgres or memory \(got "redis"\)/],
    [{ store: 'postgres' }, /--store postgres needs --database-url \(or BERTH_DATABASE_URL\)/],
    [
      { store: 'postgres', 'database-url': 'mysql://u:secret@h/db' },
      /--database-url must start with postgres:\/\/ \(got "mysql:\/\/u:\*\*\*@h\/db"\)/,
    ],
    [
      { store: 'postgres', 'database-url': 'postgres://h/db', 'database-schema': 'Bad-Name' },
      /--database-schema must be lower-case/,
    ],
    [{ durability: 'extra' }, /--durability must be normal or full/],
    [{ 'data-dir': ' ' }, /--data-dir must not be empty/],
    [{ 'max-attempts': '0' }, /--max-attempts must be a whole number >= 1 \(got "0"\)/],
    [{ 'worker-grace-ms': '-5' }, /--worker-grace-ms must be a whole number >= 0/],
  ])('refuses %o with a message naming the flag', (flags, message) => {
    expect(() => parseStoreArgs('serve', flags, {}, '/x')).toThrow(message);
  });

  it('--store postgres takes the URL and schema from flags or BERTH_DATABASE_URL / BERTH_DATABASE_SCHEMA', () => {
    const env = {
      BERTH_STORE: 'postgres',
      BERTH_DATABASE_URL: 'postgres://berth@db:5432/berth',
      BERTH_DATABASE_SCHEMA: 'prod',
    };
    expect(parseStoreArgs('serve', {}, env, '/x')).toMatchObject({
      kind: 'postgres',
      databaseUrl: 'postgres://berth@db:5432/berth',
      databaseSchema: 'prod',
    });
    expect(
      parseStoreArgs('serve', { 'database-url': 'postgresql://a@b/c', 'database-schema': 's2' }, env, '/x'),
    ).toMatchObject({ databaseUrl: 'postgresql://a@b/c', databaseSchema: 's2' });
    expect(parseStoreArgs('serve', { store: 'sqlite' }, env, '/x').databaseUrl).toBeUndefined();
  });

  it('never shows a database password', () => {
    expect(redactUrl('postgres://berth:s3cret@db:5432/berth')).toBe('postgres://berth:***@db:5432/berth');
    expect(redactUrl('postgres://berth@db/berth')).toBe('postgres://berth@db/berth');
  });

  it('prints what was recovered only when there was something', () => {
    expect(dataLine('/d/berth.sqlite (SQLite)', { queued: 0, running: 0 })).toBe('Data: /d/berth.sqlite (SQLite)');
    expect(dataLine('/d/berth.sqlite (SQLite)', { queued: 3, running: 1 })).toBe(
      'Data: /d/berth.sqlite (SQLite); recovered 3 queued and 1 running jobs',
    );
  });
});
