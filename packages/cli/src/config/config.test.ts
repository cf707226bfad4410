import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, checkWorkerFiles, defineConfig, findConfigFile, loadConfig, resolveConfig } from './index.js';

const tmp = mkdtempSync(join(tmpdir(), 'berth-config-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = join(tmp, 'berth.config.json');

function problems(value: unknown): string[] {
  try {
    resolveConfig(value, file);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toContain(file);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('resolveConfig', () => {
  it('applies defaults and resolves worker paths against the config folder', () => {
    const config = resolveConfig(
      { endpoints: { echo: { worker: './echo.ts', concurrency: 4 }, 'gpu-2': { worker: 'w/x.ts', workers: 3 } } },
      file,
    );
    expect(config).toEqual({
      file,
      dir: tmp,
      endpoints: [
        {
          id: 'echo',
          worker: join(tmp, 'echo.ts'),
          workers: 1,
          minWorkers: 1,
          maxWorkers: 1,
          idleTimeoutMs: 5000,
          scaler: undefined,
          bufferWorkers: 0,
          image: undefined,
          docker: {},
          concurrency: 4,
          drainTimeoutMs: undefined,
          apt: [],
        },
        {
          id: 'gpu-2',
          worker: join(tmp, 'w/x.ts'),
          workers: 3,
          minWorkers: 3,
          maxWorkers: 3,
          idleTimeoutMs: 5000,
          scaler: undefined,
          bufferWorkers: 0,
          image: undefined,
          docker: {},
          concurrency: undefined,
          drainTimeoutMs: undefined,
          apt: [],
        },
      ],
      models: {},
    });
  });

  it('scaling fields: maxWorkers alone scales from zero; minWorkers alone keeps that many; defaults', () => {
    const eps = resolveConfig(
      { endpoints: { a: { worker: 'a.ts', maxWorkers: 3, idleTimeoutMs: 250 }, b: { worker: 'b.ts', minWorkers: 2 } } },
      file,
    ).endpoints;
    expect(
      eps.map(({ workers, minWorkers, maxWorkers, idleTimeoutMs }) => ({
        workers,
        minWorkers,
        maxWorkers,
        idleTimeoutMs,
      })),
    ).toEqual([
      { workers: 0, minWorkers: 0, maxWorkers: 3, idleTimeoutMs: 250 },
      { workers: 2, minWorkers: 2, maxWorkers: 2, idleTimeoutMs: 5000 },
    ]);
  });

  it.each([
    [
      { worker: 'a.ts', workers: 1, maxWorkers: 2 },
      'endpoints.echo.workers: give either "workers" (a fixed count) or "minWorkers"/"maxWorkers" (scaling), not both',
    ],
    [
      { worker: 'a.ts', minWorkers: 3, maxWorkers: 2 },
      'endpoints.echo.maxWorkers: must be at least minWorkers (3) (got 2)',
    ],
    [{ worker: 'a.ts', idleTimeoutMs: -1 }, 'endpoints.echo.idleTimeoutMs: must be at least 0 (got -1)'],
  ])('scaling %j -> %s', (ep, problem) => {
    expect(problems({ endpoints: { echo: ep } })).toEqual([problem]);
  });

  it('scaler types, bufferWorkers, image and docker settings', () => {
    const eps = resolveConfig(
      {
        endpoints: {
          a: { worker: 'a.ts', maxWorkers: 4, scaler: { type: 'queue-delay', seconds: 4 }, bufferWorkers: 1 },
          b: {
            worker: 'b.ts',
            maxWorkers: 4,
            scaler: { type: 'request-count', jobsPerWorker: 4 },
            image: 'registry.local/b-worker:1',
            docker: { network: 'host', mounts: ['/srv/models:/models:ro'], gpus: 'all' },
          },
        },
      },
      file,
    ).endpoints;
    expect(eps.map(({ scaler, bufferWorkers, image, docker }) => ({ scaler, bufferWorkers, image, docker }))).toEqual([
      { scaler: { type: 'queue-delay', seconds: 4 }, bufferWorkers: 1, image: undefined, docker: {} },
      {
        scaler: { type: 'request-count', jobsPerWorker: 4 },
        bufferWorkers: 0,
        image: 'registry.local/b-worker:1',
        docker: { network: 'host', mounts: ['/srv/models:/models:ro'], gpus: 'all' },
      },
    ]);
  });

  it.each([
    [{ scaler: { type: 'queue-delay' } }, 'endpoints.echo.scaler.seconds: must be a number of seconds (got nothing)'],
    [
      { scaler: { type: 'fastest', seconds: 1 } },
      'endpoints.echo.scaler.type: must be {"type": "queue-delay", "seconds": 4} or {"type": "request-count", "jobsPerWorker": 4} (got type "fastest")',
    ],
    [
      { scaler: 'fast' },
      'endpoints.echo.scaler: must be {"type": "queue-delay", "seconds": 4} or {"type": "request-count", "jobsPerWorker": 4} (got "fast")',
    ],
    [{ scaler: { type: 'queue-delay', seconds: 0 } }, 'endpoints.echo.scaler.seconds: must be more than 0 (got 0)'],
    [
      { scaler: { type: 'request-count', jobsPerWorker: 0 } },
      'endpoints.echo.scaler.jobsPerWorker: must be at least 1 (got 0)',
    ],
    [
      { scaler: { type: 'request-count', seconds: 3 } },
      'endpoints.echo.scaler: unknown field "seconds" (known: type, seconds (queue-delay), jobsPerWorker (request-count))',
    ],
    [{ bufferWorkers: 65 }, 'endpoints.echo.bufferWorkers: must be at most 64 (got 65)'],
    [
      { image: 'My Image' },
      'endpoints.echo.image: must be an image name like "echo-worker" or "registry/echo:1" (got "My Image")',
    ],
    [
      { docker: { mounts: ['models:/models'] } },
      'endpoints.echo.docker.mounts.0: must be "<host path>:<container path>[:ro]" like "/srv/models:/models:ro" (got "models:/models")',
    ],
    [{ docker: { gpus: 'some' } }, 'endpoints.echo.docker.gpus: must be "all" or a count like "1" (got "some")'],
    [{ docker: { net: 'host' } }, 'endpoints.echo.docker: unknown field "net" (known: network, mounts, gpus)'],
  ])('scaler/docker %j -> %s', (extra, problem) => {
    expect(problems({ endpoints: { echo: { worker: 'a.ts', ...extra } } })).toEqual([problem]);
  });

  it('a batch lane: batch.maxWorkers kept as given, absent without it', () => {
    const c = resolveConfig(
      { endpoints: { a: { worker: 'a.ts', maxWorkers: 1, batch: { maxWorkers: 3 } }, b: { worker: 'b.ts' } } },
      file,
    );
    expect(c.endpoints[0]!.batch).toEqual({ maxWorkers: 3 });
    expect(c.endpoints[1]!.batch).toBeUndefined();
  });

  it('accepts apt packages (pinned too) and a drain deadline', () => {
    expect(
      resolveConfig(
        { endpoints: { a: { worker: 'a.ts', apt: ['espeak-ng', 'ffmpeg=7:5.1.6-0+deb12u1'], drainTimeoutMs: 60000 } } },
        file,
      ).endpoints[0],
    ).toMatchObject({
      apt: ['espeak-ng', 'ffmpeg=7:5.1.6-0+deb12u1'],
      drainTimeoutMs: 60000,
    });
  });

  it('accepts $schema and workers: 0', () => {
    expect(
      resolveConfig({ $schema: 'x', endpoints: { a: { worker: 'a.ts', workers: 0 } } }, file).endpoints[0]?.workers,
    ).toBe(0);
  });

  it.each([
    [{ endpoints: { Echo: { worker: 'a.ts' } } }, 'endpoints: "Echo" is not a valid endpoint id'],
    [{ endpoints: { a_b: { worker: 'a.ts' } } }, 'endpoints: "a_b" is not a valid endpoint id'],
    [{ endpoints: { echo: { worker: 'a.ts', workers: -1 } } }, 'endpoints.echo.workers: must be at least 0 (got -1)'],
    [
      { endpoints: { echo: { worker: 'a.ts', workers: 1.5 } } },
      'endpoints.echo.workers: must be a whole number (got 1.5)',
    ],
    [{ endpoints: { echo: { worker: 'a.ts', workers: '2' } } }, 'endpoints.echo.workers: must be a number (got "2")'],
    [
      { endpoints: { echo: { worker: 'a.ts', concurrency: 0 } } },
      'endpoints.echo.concurrency: must be at least 1 (got 0)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', concurrency: 5000 } } },
      'endpoints.echo.concurrency: must be at most 1024 (got 5000)',
    ],
    [
      { endpoints: { echo: {} } },
      'endpoints.echo.worker: give either "worker" (a handler file, like "./handler.ts") or "command" (like "python3 handler.py"), exactly one',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', command: 'python3 h.py' } } },
      'endpoints.echo.worker: give either "worker"',
    ],
    [{ endpoints: { echo: { command: '   ' } } }, 'endpoints.echo.command: must not be empty'],
    [
      { endpoints: { echo: { command: 3 } } },
      'endpoints.echo.command: must be a command line, like "python3 handler.py" (got 3)',
    ],
    [{ endpoints: { echo: { worker: '' } } }, 'endpoints.echo.worker: must not be empty'],
    [
      { endpoints: { echo: './echo.ts' } },
      'endpoints.echo: must be an object like {"worker": "./handler.ts"} (got "./echo.ts")',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', concurency: 2 } } },
      'endpoints.echo: unknown field "concurency" (known: worker, command, workers, minWorkers, maxWorkers, idleTimeoutMs, concurrency, drainTimeoutMs, apt, scaler, bufferWorkers, image, docker, gpusPerWorker, type, healthPath, requestTimeoutMs, maxBodyBytes, coldStartWaitMs, affinityWaitMs, batch)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', apt: 'ffmpeg' } } },
      'endpoints.echo.apt: must be a list of Debian package names like ["espeak-ng", "ffmpeg"] (got "ffmpeg")',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', apt: ['ffmpeg; rm -rf /'] } } },
      'endpoints.echo.apt.0: must be a Debian package name like "ffmpeg" (got "ffmpeg; rm -rf /")',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', drainTimeoutMs: -1 } } },
      'endpoints.echo.drainTimeoutMs: must be at least 0 (got -1)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', batch: { maxWorkers: 0 } } } },
      'endpoints.echo.batch.maxWorkers: must be a whole number of lane workers from 1 to 64 (got 0)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', batch: { maxWorkers: 1.5 } } } },
      'endpoints.echo.batch.maxWorkers: must be a whole number of lane workers from 1 to 64 (got 1.5)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', batch: 2 } } },
      'endpoints.echo.batch: must be an object like {"maxWorkers": 2} (workers started for batch jobs only) (got 2)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts', batch: { maxworkers: 2 } } } },
      'endpoints.echo.batch: unknown field "maxworkers" (known: maxWorkers)',
    ],
    [
      { endpoints: { web: { type: 'http', command: 'node s.js', batch: { maxWorkers: 1 } } } },
      'endpoints.web.batch: a batch lane is for queue endpoints',
    ],
    [
      { endpoint: {} },
      '(top level): unknown field "endpoint" (known: endpoints, models, webhooks, rateLimits, batches, gpus)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts' } }, batches: { maxqueued: 5 } },
      'batches: unknown field "maxqueued" (known: maxQueued, maxOpen, maxPerCall, retentionMs)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts' } }, batches: { maxPerCall: 0 } },
      'batches.maxPerCall: must be at least 1 (got 0)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts' } }, batches: 5 },
      'batches: must be an object like {"maxQueued": 200000, "maxPerCall": 10000} (got 5)',
    ],
    [
      { endpoints: { docker: { worker: 'a.ts', dockr: 1 } } },
      'endpoints.docker: unknown field "dockr" (known: worker,',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts' } }, rateLimits: { perworker: 5 } },
      'rateLimits: unknown field "perworker" (known: enabled, base, perWorker)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts' } }, rateLimits: { base: { run: -1 } } },
      'rateLimits.base.run: must be at least 0 (got -1)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts' } }, rateLimits: { perWorker: 2.5 } },
      'rateLimits.perWorker: must be a whole number (got 2.5)',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts' } }, rateLimits: { enabled: 'no' } },
      'rateLimits.enabled: must be true or false (got "no")',
    ],
    [
      { endpoints: { echo: { worker: 'a.ts' } }, rateLimits: false },
      'rateLimits: must be an object like {"base": {"run": 5000}, "perWorker": 100} or {"enabled": false} (got false)',
    ],
    [{ endpoints: {} }, 'endpoints: must name at least one endpoint'],
    [{ endpoints: [] }, 'endpoints: must be an object mapping endpoint ids to {"worker": ...} (got an array)'],
    [[], '(top level): must be an object like {"endpoints": {...}} (got an array)'],
    [null, '(top level): must be an object like {"endpoints": {...}} (got null)'],
  ])('%j -> %s', (value, problem) => {
    expect(problems(value).some((p) => p.startsWith(problem))).toBe(true);
  });

  it('batches: the limits as given, unset ones left to the server', () => {
    const c = resolveConfig(
      { endpoints: { echo: { worker: 'a.ts' } }, batches: { maxQueued: 1_000_000, retentionMs: 86_400_000 } },
      join(tmp, 'berth.config.json'),
    );
    expect(c.batches).toEqual({ maxQueued: 1_000_000, retentionMs: 86_400_000 });
    expect(resolveConfig({ endpoints: { echo: { worker: 'a.ts' } } }, join(tmp, 'c.json')).batches).toBeUndefined();
  });

  it('a command endpoint: words split on spaces (quotes group them), files it names are watched', () => {
    writeFileSync(join(tmp, 'h.py'), 'pass\n');
    const c = resolveConfig(
      { endpoints: { py: { command: `python3 -u h.py --name "two words"` } } },
      join(tmp, 'berth.config.json'),
    );
    expect(c.endpoints[0]).toMatchObject({
      command: ['python3', '-u', 'h.py', '--name', 'two words'],
      commandFiles: [join(tmp, 'h.py')],
      worker: join(tmp, 'h.py'),
      workers: 1,
    });
  });

  it('reports every problem at once', () => {
    expect(problems({ endpoints: { a: { worker: 1, workers: -1 }, B: { worker: 'x' } } })).toHaveLength(3);
  });

  it('defineConfig returns its argument (typed)', () => {
    const c = defineConfig({ endpoints: { echo: { worker: './echo.ts' } } });
    expect(c).toEqual({ endpoints: { echo: { worker: './echo.ts' } } });
  });
});

describe('loadConfig', () => {
  it('checks the models section with the server rules and against the endpoints of the file', async () => {
    const f = join(tmp, 'models.config.json');
    const models = {
      'shapes-diffusion': {
        endpoint: 'image',
        kind: 'image',
        price: { perMegapixelStep: 0.0002 },
        limits: { defaultWidth: 64, defaultHeight: 64, minSize: 32, maxSize: 128, sizeMultiple: 4 },
      },
    };
    writeFileSync(f, JSON.stringify({ endpoints: { image: { worker: './t2i.ts' } }, models }));
    expect((await loadConfig(f)).models).toEqual(models);
    writeFileSync(
      f,
      JSON.stringify({
        endpoints: { image: { worker: './t2i.ts' } },
        models: { 'shapes-diffusion': { endpoint: 'img', kind: 'image' } },
      }),
    );
    await expect(loadConfig(f)).rejects.toThrow(
      /models\.shapes-diffusion\.endpoint: "img" is not an endpoint of this file \(known: image\)/,
    );
    writeFileSync(
      f,
      JSON.stringify({
        endpoints: { image: { worker: './t2i.ts' } },
        models: { 'shapes-diffusion': { endpoint: 'image', kind: 'speech' } },
      }),
    );
    await expect(loadConfig(f)).rejects.toThrow(
      /models\.shapes-diffusion\.kind must be one of image, upscale, audio, video \(got "speech"\)/,
    );
  });

  it('rateLimits: the object createServer takes, operation names checked with the server rules', async () => {
    const f = join(tmp, 'limits.config.json');
    const rateLimits = { base: { run: 5000, 'purge-queue': 10 }, perWorker: 100 };
    writeFileSync(f, JSON.stringify({ endpoints: { echo: { worker: './echo.ts' } }, rateLimits }));
    expect((await loadConfig(f)).rateLimits).toEqual(rateLimits);
    writeFileSync(f, JSON.stringify({ endpoints: { echo: { worker: './echo.ts' } }, rateLimits: { enabled: false } }));
    expect((await loadConfig(f)).rateLimits).toEqual({ enabled: false });
    writeFileSync(
      f,
      JSON.stringify({ endpoints: { echo: { worker: './echo.ts' } }, rateLimits: { base: { runn: 5 } } }),
    );
    const err = await loadConfig(f).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      expect.stringMatching(/^rateLimits\.base: unknown operation "runn" \(known: runsync, run, status, /),
    ]);
    writeFileSync(f, JSON.stringify({ endpoints: { echo: { worker: './echo.ts' } } }));
    expect((await loadConfig(f)).rateLimits).toBeUndefined();
  });

  it('loads JSON', async () => {
    const f = join(tmp, 'a.json');
    writeFileSync(f, JSON.stringify({ endpoints: { echo: { worker: './echo.ts' } } }));
    expect((await loadConfig(f)).endpoints).toEqual([
      {
        id: 'echo',
        worker: join(tmp, 'echo.ts'),
        workers: 1,
        minWorkers: 1,
        maxWorkers: 1,
        idleTimeoutMs: 5000,
        scaler: undefined,
        bufferWorkers: 0,
        image: undefined,
        docker: {},
        concurrency: undefined,
        drainTimeoutMs: undefined,
        apt: [],
      },
    ]);
  });

  it('names the file when the JSON is broken', async () => {
    const f = join(tmp, 'broken.json');
    writeFileSync(f, '{ "endpoints": ');
    await expect(loadConfig(f)).rejects.toThrow(new RegExp(`config file ${f} is not valid JSON`));
  });

  it('loads TypeScript with a default export (via tsx)', async () => {
    const f = join(tmp, 'b.config.ts');
    writeFileSync(
      f,
      `const defineConfig = <T,>(c: T): T => c;\nconst workers: number = 2;\nexport default defineConfig({ endpoints: { ts: { worker: './ts.ts', workers } } });\n`,
    );
    expect((await loadConfig(f)).endpoints).toEqual([
      {
        id: 'ts',
        worker: join(tmp, 'ts.ts'),
        workers: 2,
        minWorkers: 2,
        maxWorkers: 2,
        idleTimeoutMs: 5000,
        scaler: undefined,
        bufferWorkers: 0,
        image: undefined,
        docker: {},
        concurrency: undefined,
        drainTimeoutMs: undefined,
        apt: [],
      },
    ]);
  });

  it('loads TypeScript in an ESM package ("type": "module")', async () => {
    const dir = join(tmp, 'esm');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const f = join(dir, 'berth.config.ts');
    writeFileSync(f, `export default { endpoints: { esm: { worker: './w.ts', concurrency: 2 as number } } };\n`);
    expect((await loadConfig(f)).endpoints).toEqual([
      {
        id: 'esm',
        worker: join(dir, 'w.ts'),
        workers: 1,
        minWorkers: 1,
        maxWorkers: 1,
        idleTimeoutMs: 5000,
        scaler: undefined,
        bufferWorkers: 0,
        image: undefined,
        docker: {},
        concurrency: 2,
        drainTimeoutMs: undefined,
        apt: [],
      },
    ]);
  });

  it('a module without a default export', async () => {
    const f = join(tmp, 'nodefault.config.ts');
    writeFileSync(f, `export const config = { endpoints: {} };\n`);
    await expect(loadConfig(f)).rejects.toThrow(/has no default export/);
  });

  it('a module that throws while loading', async () => {
    const f = join(tmp, 'throws.config.ts');
    writeFileSync(f, `throw new Error('kaboom');\nexport default {};\n`);
    await expect(loadConfig(f)).rejects.toThrow(/failed to load config file .*kaboom/);
  });

  it('a TypeScript config that is invalid names the field', async () => {
    const f = join(tmp, 'invalid.config.ts');
    writeFileSync(f, `export default { endpoints: { echo: { worker: './e.ts', workers: 'many' } } };\n`);
    await expect(loadConfig(f)).rejects.toThrow(/endpoints\.echo\.workers: must be a number \(got "many"\)/);
  });

  it('an unsupported extension', async () => {
    const f = join(tmp, 'c.yaml');
    writeFileSync(f, 'endpoints: {}');
    await expect(loadConfig(f)).rejects.toThrow(/unsupported extension ".yaml"/);
  });

  it('a missing file', async () => {
    await expect(loadConfig(join(tmp, 'missing.json'))).rejects.toThrow(/config file not found: .*missing\.json/);
  });
});

describe('findConfigFile', () => {
  it('uses --config relative to cwd', () => {
    writeFileSync(join(tmp, 'x.json'), '{}');
    expect(findConfigFile('x.json', tmp)).toBe(join(tmp, 'x.json'));
  });

  it('falls back to berth.config.* in cwd, preferring .ts', () => {
    const dir = join(tmp, 'find');
    mkdirSync(dir);
    writeFileSync(join(dir, 'berth.config.json'), '{}');
    expect(findConfigFile(undefined, dir)).toBe(join(dir, 'berth.config.json'));
    writeFileSync(join(dir, 'berth.config.ts'), 'export default {}');
    expect(findConfigFile(undefined, dir)).toBe(join(dir, 'berth.config.ts'));
  });

  it('says where it looked when there is none', () => {
    const dir = join(tmp, 'empty');
    mkdirSync(dir);
    expect(() => findConfigFile(undefined, dir)).toThrow(/no config file found in .*empty .*pass --config <file>/);
  });
});

describe('checkWorkerFiles', () => {
  it('names the endpoint, the field and the missing file', () => {
    writeFileSync(join(tmp, 'here.ts'), '');
    const config = resolveConfig(
      {
        endpoints: {
          ok: { worker: './here.ts' },
          gone: { worker: './gone.ts' },
          ext: { worker: './x.ts', workers: 0 },
        },
      },
      file,
    );
    expect(() => checkWorkerFiles(config)).toThrow(`endpoints.gone.worker: file not found: ${join(tmp, 'gone.ts')}`);
  });
});
