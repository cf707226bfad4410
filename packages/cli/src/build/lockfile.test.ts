import { describe, expect, it } from 'vitest';
import { lockSubset, LockSubsetError, type LockFile } from './lockfile.js';

const lock: LockFile = {
  lockfileVersion: 3,
  packages: {
    '': { name: 'root', workspaces: ['app'] },
    app: { name: 'app', dependencies: { a: '1.0.0', w: '*' } },
    'node_modules/app': { resolved: 'app', link: true },
    'node_modules/a': {
      version: '1.0.0',
      integrity: 'sha512-a',
      dependencies: { b: '^2' },
      optionalDependencies: { 'a-linux': '1.0.0', 'a-darwin': '1.0.0' },
    },
    'node_modules/a-linux': { version: '1.0.0', os: ['linux'], optional: true },
    'node_modules/b': { version: '1.0.0', dev: true }, // hoisted old b, used by something else
    'node_modules/a/node_modules/b': { version: '2.0.0', dependencies: { c: '^1' } },
    'node_modules/c': { version: '1.2.0', devOptional: true },
    'app/node_modules/d': { version: '3.0.0', dependencies: { c: '^1' } },
    'node_modules/w': { resolved: 'packages/w', link: true },
  },
};

describe('lockSubset', () => {
  it("cuts the worker's dependencies out of a workspace lock: same versions, nesting kept, dev flags dropped, optional binaries kept", () => {
    const out = lockSubset(lock, 'app', 'app-worker', { a: '1.0.0', d: '3.0.0' });
    expect(out.lockfileVersion).toBe(3);
    expect(out.packages).toEqual({
      '': { name: 'app-worker', dependencies: { a: '1.0.0', d: '3.0.0' } },
      'node_modules/a': {
        version: '1.0.0',
        integrity: 'sha512-a',
        dependencies: { b: '^2' },
        optionalDependencies: { 'a-linux': '1.0.0', 'a-darwin': '1.0.0' },
      },
      'node_modules/a-linux': { version: '1.0.0', os: ['linux'], optional: true },
      'node_modules/a/node_modules/b': { version: '2.0.0', dependencies: { c: '^1' } },
      'node_modules/c': { version: '1.2.0' },
      'node_modules/d': { version: '3.0.0', dependencies: { c: '^1' } },
    });
  });

  it('refuses what it cannot reproduce: a missing package, a workspace link', () => {
    expect(() => lockSubset(lock, 'app', 'x', { zzz: '1.0.0' })).toThrow(
      new LockSubsetError("zzz (needed by the worker) is not in the project's package-lock.json"),
    );
    expect(() => lockSubset(lock, 'app', 'x', { w: '1.0.0' })).toThrow(/w is a workspace link/);
  });

  it('refuses two versions that would land on one path', () => {
    const shadow: LockFile = {
      lockfileVersion: 3,
      packages: {
        '': { name: 'root' },
        'app/node_modules/b': { version: '9.0.0' },
        'node_modules/e': { version: '1.0.0', dependencies: { b: '*' } },
        'node_modules/b': { version: '1.0.0' },
      },
    };
    expect(() => lockSubset(shadow, 'app', 'x', { b: '9.0.0', e: '1.0.0' })).toThrow(
      /two versions of b would share node_modules\/b/,
    );
  });
});
