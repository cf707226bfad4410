import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// What users of the built package see (packages/server/dist, through package.json `exports`): `npm test` builds
// first, like the CLI tests that import `@berth/server`.
const PKG = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REPO = resolve(PKG, '../..');

describe('@berth/server package surface', () => {
  it('the root exports the server, its options, errors and types; the stores come from subpaths, each name once', async () => {
    const root = await import('@berth/server');
    expect(Object.keys(root).sort()).toEqual([
      'ConfigError',
      'DuplicateJobError',
      'MissingDependencyError',
      'StoreUnavailableError',
      'createApiKey',
      'createLogger',
      'createServer',
      'resolveModels',
      'resolveServerOptions',
      'silentLogger',
      'systemClock',
    ]);
    expect(Object.keys(await import('@berth/server/memory')).sort()).toEqual(['MemoryKeyStore', 'MemoryStore']);
    expect(Object.keys(await import('@berth/server/sqlite')).sort()).toEqual(['SqliteKeyStore', 'SqliteStore']);
    expect(Object.keys(await import('@berth/server/postgres')).sort()).toEqual([
      'PgClusterBus',
      'PgKeyStore',
      'PgStore',
    ]);
    // The scale loop, its pool interface, the GPU allocator and the batch lane's policy: for programs that start
    // and stop workers.
    expect(Object.keys(await import('@berth/server/scaling')).sort()).toEqual([
      'GpuAllocator',
      'ScaleLoop',
      'batchLanePolicy',
      'batchLaneViews',
      'nextWorkerId',
    ]);
    // One subpath each: silentLogger from the root, MemoryStore from /memory, /testing only what tests add.
    expect(Object.keys(await import('@berth/server/testing'))).toEqual(['ManualClock', 'ScriptedWorker']);
  });

  describe('without the optional peer dependencies installed', () => {
    // A project folder holding @berth/server (a copy: a symlink would resolve modules from the repository, where
    // the drivers are installed) and its declared dependencies, but neither pg nor better-sqlite3.
    let dir = '';
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'berth-peers-'));
      const server = join(dir, 'node_modules/@berth/server');
      await mkdir(server, { recursive: true });
      await cp(join(PKG, 'package.json'), join(server, 'package.json'));
      await cp(join(PKG, 'dist'), join(server, 'dist'), { recursive: true });
      // Exactly the declared dependencies: an import of an undeclared package fails here as it would for users.
      const { dependencies } = JSON.parse(await readFile(join(PKG, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      for (const name of Object.keys(dependencies)) {
        const from = name === '@berth/protocol' ? join(REPO, 'packages/protocol') : join(REPO, 'node_modules', name);
        await mkdir(dirname(join(dir, 'node_modules', name)), { recursive: true });
        await symlink(from, join(dir, 'node_modules', name));
      }
    });
    afterAll(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    async function run(script: string): Promise<unknown> {
      await writeFile(join(dir, 'run.mjs'), script);
      const { stdout } = await promisify(execFile)(process.execPath, ['run.mjs'], { cwd: dir, timeout: 20_000 });
      return JSON.parse(stdout);
    }
    const report = `const report = (e) => ({ name: e.name, code: e.code, packageName: e.packageName, message: e.message });`;

    it('the root and the memory store work', async () => {
      const out = await run(`
        import { createServer, silentLogger } from '@berth/server';
        const server = createServer({ logger: silentLogger, endpoints: ['echo'] });
        const { port } = await server.listen({ port: 0 });
        const res = await fetch('http://127.0.0.1:' + port + '/v2/echo/health');
        await server.close({ drainMs: 0 });
        console.log(JSON.stringify({ status: res.status }));`);
      expect(out).toEqual({ status: 401 }); // answered (no API key configured), with no driver installed
    });

    it('opening a PostgreSQL or SQLite store throws MissingDependencyError naming the package to install', async () => {
      const out = await run(`
        ${report}
        const out = {};
        const { PgStore } = await import('@berth/server/postgres');
        await PgStore.open({ url: 'postgres://127.0.0.1:1/none' }).catch((e) => (out.pg = report(e)));
        const { SqliteStore } = await import('@berth/server/sqlite');
        try { new SqliteStore({ file: 'berth.sqlite' }); } catch (e) { out.sqlite = report(e); }
        console.log(JSON.stringify(out));`);
      expect(out).toMatchObject({
        pg: {
          name: 'MissingDependencyError',
          code: 'missing_dependency',
          packageName: 'pg',
          message: expect.stringContaining('npm install pg'),
        },
        sqlite: {
          name: 'MissingDependencyError',
          code: 'missing_dependency',
          packageName: 'better-sqlite3',
          message: expect.stringContaining('npm install better-sqlite3'),
        },
      });
    });
  });
});
