import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ConfigError, describeValue, ENDPOINT_ID_RE } from '@berth/protocol';
import type { ModelConfig } from '@berth/server';

/** One endpoint that `berth dev` serves and runs workers for. */
export interface EndpointConfig {
  /**
   * The handler file (TypeScript or JavaScript) whose code calls `start()` from `@berth/worker`, relative to
   * the config file. Each worker process runs `node --import tsx <worker>` with the config file's folder as cwd.
   * Give either `worker` or `command`.
   */
  worker?: string;
  /**
   * Instead of `worker`: a command that starts a worker speaking RunPod's worker protocol, such as an unmodified
   * runpod-python worker (`"python3 handler.py"`). Split on spaces (quotes group words); run in the config file's
   * folder, in its own process group, with the `RUNPOD_*` variables pointing at this control plane. Files named
   * in it are watched for hot reload. `concurrency` does not apply (the handler's `concurrency_modifier` does).
   */
  command?: string;
  /**
   * A fixed number of worker processes. Default 1. `0` runs none (for workers you start yourself). Shorthand for
   * `minWorkers` = `maxWorkers` = `workers`; not allowed together with them.
   */
  workers?: number;
  /** Scaling: workers kept running even when idle. Default 0 once `maxWorkers` is set (scale to zero). */
  minWorkers?: number;
  /**
   * Scaling: at most this many workers; `berth dev` starts more while queued and running jobs exceed what the
   * running workers take (`concurrency` each). Default `max(1, minWorkers)` once `minWorkers` is set.
   */
  maxWorkers?: number;
  /** Scaling: a worker above `minWorkers` with no job for this long is stopped. Default 5000 ms. */
  idleTimeoutMs?: number;
  /**
   * Jobs each worker runs at once (sets `BERTH_CONCURRENCY`, which overrides `start({ concurrency })`).
   * Default: what the handler passes to `start()`, which itself defaults to 1.
   */
  concurrency?: number;
  /**
   * Drain deadline of a stopping worker (sets `BERTH_DRAIN_TIMEOUT_MS`): running jobs get this long to finish,
   * then are handed back to the queue at once. Default in `berth build` images: 7000, below Docker's 10 s
   * `docker stop` grace; the image's stop timeout (`deploy.json`) is derived from it.
   */
  drainTimeoutMs?: number;
  /**
   * Debian packages `berth build` installs in the endpoint's images (`apt-get install`), e.g. `["espeak-ng", "ffmpeg"]`
   * for a handler that spawns them. Default: none.
   */
  apt?: string[];
}

/** The `berth.config.json` / `berth.config.ts` file. */
export interface BerthConfig {
  /** Endpoint id (`^[a-z0-9][a-z0-9-]{0,62}$`, the `<endpoint_id>` in `/v2/<endpoint_id>/run`) to its settings. */
  endpoints: Record<string, EndpointConfig>;
  /**
   * Public models served under `/v2/<model_slug>/...` by an endpoint's workers, with input limits and a price
   * table (`docs/public-models.md`). Default: none.
   *
   * @example { "shapes-diffusion": { "endpoint": "image", "kind": "image", "price": { "perMegapixelStep": 0.0002 } } }
   */
  models?: Record<string, ModelConfig>;
}

/**
 * Typed helper for `berth.config.ts`.
 *
 * @example
 * // berth.config.ts
 * import { defineConfig } from '@berth/cli';
 * export default defineConfig({ endpoints: { echo: { worker: './echo.ts', concurrency: 4 } } });
 */
export function defineConfig(config: BerthConfig): BerthConfig {
  return config;
}

/** An endpoint after defaults are applied and paths resolved. */
export interface ResolvedEndpoint {
  id: string;
  /** Absolute path of the handler file (for a `command`: the first file it names, else the config file). */
  worker: string;
  /** A `command` endpoint: the program and its arguments. */
  command?: string[];
  /** A `command` endpoint: the files it names (watched for hot reload). */
  commandFiles?: string[];
  /** Workers started at once: `minWorkers`. */
  workers: number;
  minWorkers: number;
  maxWorkers: number;
  idleTimeoutMs: number;
  /** `undefined`: leave it to the handler's `start({ concurrency })`. */
  concurrency: number | undefined;
  /** `undefined`: the worker's default (30 s; 7 s in `berth build` images). */
  drainTimeoutMs: number | undefined;
  /** Debian packages for the image. */
  apt: string[];
}

export interface ResolvedConfig {
  /** Absolute path of the config file. */
  file: string;
  /** Its folder: the cwd of every worker process. */
  dir: string;
  endpoints: ResolvedEndpoint[];
  /** As in the file (checked by `loadConfig` with the server's rules). */
  models: Record<string, ModelConfig>;
}

export { ConfigError };

/** The config file is missing, unreadable or invalid. `berth` prints the message and exits with code 2. */
function fileError(file: string, message: string, problems: string[] = []): ConfigError {
  return new ConfigError(message, { file, problems });
}

/** Names tried, in order, when `--config` is not given. */
export const DEFAULT_CONFIG_FILES = [
  'berth.config.ts',
  'berth.config.mts',
  'berth.config.js',
  'berth.config.mjs',
  'berth.config.json',
] as const;

const int = (min: number, max: number) =>
  z
    .number({ error: (i) => `must be a number (got ${describeValue(i.input)})` })
    .int({ error: (i) => `must be a whole number (got ${describeValue(i.input)})` })
    .min(min, { error: (i) => `must be at least ${min} (got ${describeValue(i.input)})` })
    .max(max, { error: (i) => `must be at most ${max} (got ${describeValue(i.input)})` });

const ENDPOINT_FIELDS = [
  'worker',
  'command',
  'workers',
  'minWorkers',
  'maxWorkers',
  'idleTimeoutMs',
  'concurrency',
  'drainTimeoutMs',
  'apt',
];

/** A Debian package name, optionally pinned (`ffmpeg`, `espeak-ng=1.51+dfsg-10`). */
const APT_PACKAGE_RE = /^[a-z0-9][a-z0-9+.-]*(=[A-Za-z0-9.+~:-]+)?$/;
const AptPackage = z.string().regex(APT_PACKAGE_RE, {
  error: (i) => `must be a Debian package name like "ffmpeg" (got ${describeValue(i.input)})`,
});

const EndpointSchema = z
  .strictObject(
    {
      worker: z
        .string({
          error: (i) => `must be the path of a handler file, like "./handler.ts" (got ${describeValue(i.input)})`,
        })
        .min(1, 'must not be empty')
        .optional(),
      command: z
        .string({ error: (i) => `must be a command line, like "python3 handler.py" (got ${describeValue(i.input)})` })
        .refine((c) => splitCommand(c).length > 0, 'must not be empty')
        .optional(),
      workers: int(0, 64).optional(),
      minWorkers: int(0, 64).optional(),
      maxWorkers: int(0, 64).optional(),
      idleTimeoutMs: int(0, 86_400_000).default(5_000),
      concurrency: int(1, 1024).optional(),
      drainTimeoutMs: int(0, 86_400_000).optional(),
      apt: z
        .array(AptPackage, {
          error: (i) =>
            `must be a list of Debian package names like ["espeak-ng", "ffmpeg"] (got ${describeValue(i.input)})`,
        })
        .optional(),
    },
    { error: (i) => `must be an object like {"worker": "./handler.ts"} (got ${describeValue(i.input)})` },
  )
  .superRefine((ep, ctx) => {
    if ((ep.worker === undefined) === (ep.command === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['worker'],
        message:
          'give either "worker" (a handler file, like "./handler.ts") or "command" (like "python3 handler.py"), exactly one',
      });
    }
    if (ep.workers !== undefined && (ep.minWorkers !== undefined || ep.maxWorkers !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['workers'],
        message: 'give either "workers" (a fixed count) or "minWorkers"/"maxWorkers" (scaling), not both',
      });
    }
    if (ep.minWorkers !== undefined && ep.maxWorkers !== undefined && ep.minWorkers > ep.maxWorkers) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxWorkers'],
        message: `must be at least minWorkers (${ep.minWorkers}) (got ${ep.maxWorkers})`,
      });
    }
  });

const ConfigSchema = z.strictObject(
  {
    $schema: z.string().optional(),
    endpoints: z
      .record(z.string().regex(ENDPOINT_ID_RE), EndpointSchema, {
        error: (i) => `must be an object mapping endpoint ids to {"worker": ...} (got ${describeValue(i.input)})`,
      })
      .refine((eps) => Object.keys(eps).length > 0, 'must name at least one endpoint'),
    models: z
      .record(
        z.string(),
        z.looseObject({ endpoint: z.string({ error: 'must name the endpoint that serves the model' }) }),
        {
          error: (i) =>
            `must be an object mapping model slugs to {"endpoint": ..., "kind": ...} (got ${describeValue(i.input)})`,
        },
      )
      .optional(),
  },
  { error: (i) => `must be an object like {"endpoints": {...}} (got ${describeValue(i.input)})` },
);

function formatIssue(issue: z.ZodError['issues'][number]): string {
  const path = issue.path.map(String);
  if (issue.code === 'invalid_key') {
    return `${path.slice(0, -1).join('.')}: "${String(path.at(-1))}" is not a valid endpoint id (use lowercase letters, digits and "-", starting with a letter or digit, at most 63 characters)`;
  }
  if (issue.code === 'unrecognized_keys') {
    const known = path.length === 0 ? ['endpoints', 'models'] : ENDPOINT_FIELDS;
    const keys = issue.keys.map((k) => `"${k}"`).join(', ');
    return `${path.join('.') || '(top level)'}: unknown field${issue.keys.length > 1 ? 's' : ''} ${keys} (known: ${known.join(', ')})`;
  }
  return `${path.join('.') || '(top level)'}: ${issue.message}`;
}

/**
 * Validates a config value (already loaded) and applies defaults. Worker paths are resolved against the
 * config file's folder; whether the files exist is checked by `checkWorkerFiles`.
 *
 * @throws ConfigError naming the file and every bad field.
 */
export function resolveConfig(value: unknown, file: string): ResolvedConfig {
  const parsed = ConfigSchema.safeParse(value);
  if (!parsed.success) {
    throw fileError(file, `invalid config file ${file}`, parsed.error.issues.map(formatIssue));
  }
  const dir = dirname(file);
  return {
    file,
    dir,
    models: (parsed.data.models ?? {}) as unknown as Record<string, ModelConfig>,
    endpoints: Object.entries(parsed.data.endpoints).map(([id, ep]) => {
      const scaling = ep.minWorkers !== undefined || ep.maxWorkers !== undefined;
      const minWorkers = scaling ? (ep.minWorkers ?? 0) : (ep.workers ?? 1);
      const maxWorkers = scaling ? (ep.maxWorkers ?? Math.max(1, minWorkers)) : minWorkers;
      const command = ep.command === undefined ? undefined : splitCommand(ep.command);
      const commandFiles = command
        ?.slice(1)
        .map((a) => resolve(dir, a))
        .filter((f) => existsSync(f) && statSync(f).isFile());
      return {
        id,
        worker: command ? (commandFiles?.[0] ?? file) : resolve(dir, ep.worker!),
        ...(command ? { command, commandFiles: commandFiles ?? [] } : {}),
        workers: minWorkers,
        minWorkers,
        maxWorkers,
        idleTimeoutMs: ep.idleTimeoutMs,
        concurrency: ep.concurrency,
        drainTimeoutMs: ep.drainTimeoutMs,
        apt: ep.apt ?? [],
      };
    }),
  };
}

/**
 * Finds the config file: `explicit` if given, else the first of `DEFAULT_CONFIG_FILES` in `cwd`.
 *
 * @throws ConfigError when it does not exist.
 */
export function findConfigFile(explicit: string | undefined, cwd: string): string {
  if (explicit !== undefined) {
    const file = resolve(cwd, explicit);
    if (!existsSync(file)) throw fileError(file, `config file not found: ${file}`);
    if (statSync(file).isDirectory()) throw fileError(file, `--config must name a file, not a folder: ${file}`);
    return file;
  }
  for (const name of DEFAULT_CONFIG_FILES) {
    const file = resolve(cwd, name);
    if (existsSync(file)) return file;
  }
  throw fileError(
    resolve(cwd, 'berth.config.json'),
    `no config file found in ${cwd} (looked for ${DEFAULT_CONFIG_FILES.join(', ')}); pass --config <file>`,
  );
}

/**
 * Reads a config file: JSON (`.json`), or a module (`.ts`, `.mts`, `.cts`, `.js`, `.mjs`, `.cjs`, loaded with
 * tsx) whose default export is the config. Returns it validated, with defaults applied.
 *
 * @throws ConfigError naming the file and what is wrong.
 * @example const config = await loadConfig(findConfigFile(args.config, process.cwd()));
 */
export async function loadConfig(file: string): Promise<ResolvedConfig> {
  const abs = resolve(file);
  if (!existsSync(abs)) throw fileError(abs, `config file not found: ${abs}`);
  const ext = extname(abs).toLowerCase();
  let value: unknown;
  if (ext === '.json') {
    let text: string;
    try {
      text = readFileSync(abs, 'utf8');
    } catch (err) {
      throw fileError(abs, `cannot read config file ${abs}: ${errorMessage(err)}`);
    }
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw fileError(abs, `config file ${abs} is not valid JSON: ${errorMessage(err)}`);
    }
  } else if (['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'].includes(ext)) {
    let mod: Record<string, unknown>;
    try {
      const { tsImport } = await import('tsx/esm/api');
      mod = (await tsImport(pathToFileURL(abs).href, import.meta.url)) as Record<string, unknown>;
    } catch (err) {
      throw fileError(abs, `failed to load config file ${abs}: ${errorMessage(err)}`);
    }
    value = unwrapDefault(mod);
    if (value === undefined) {
      throw fileError(
        abs,
        `config file ${abs} has no default export; write \`export default defineConfig({ endpoints: {...} })\``,
      );
    }
  } else {
    throw fileError(abs, `config file ${abs}: unsupported extension "${ext}" (use .json, .ts, .mts, .js or .mjs)`);
  }
  const config = resolveConfig(value, abs);
  await checkModels(config);
  return config;
}

/** Checks the `models` section with the server's own rules, and that each model's endpoint is in the file. */
async function checkModels(config: ResolvedConfig): Promise<void> {
  if (Object.keys(config.models).length === 0) return;
  const problems: string[] = [];
  const ids = new Set(config.endpoints.map((e) => e.id));
  for (const [slug, m] of Object.entries(config.models)) {
    if (!ids.has(m.endpoint))
      problems.push(
        `models.${slug}.endpoint: "${m.endpoint}" is not an endpoint of this file (known: ${[...ids].join(', ')})`,
      );
    if (ids.has(slug)) problems.push(`models.${slug}: a model slug must differ from every endpoint id`);
  }
  if (problems.length === 0) {
    try {
      (await import('@berth/server')).resolveModels(config.models);
    } catch (err) {
      problems.push(errorMessage(err).replace(/^option /, ''));
    }
  }
  if (problems.length) throw fileError(config.file, `invalid config file ${config.file}`, problems);
}

// A .ts file outside an ESM package is compiled as CommonJS: its namespace's `default` is then `module.exports`,
// marked `__esModule`, whose own `default` (if any) is the config.
function unwrapDefault(mod: Record<string, unknown>): unknown {
  const value = mod['default'];
  if (value !== null && typeof value === 'object' && '__esModule' in value)
    return (value as Record<string, unknown>)['default'];
  return value;
}

/**
 * Checks that every endpoint's worker file exists.
 *
 * @throws ConfigError naming the endpoint, the missing file and the field it came from.
 */
export function checkWorkerFiles(config: ResolvedConfig): void {
  const problems: string[] = [];
  for (const ep of config.endpoints) {
    if (ep.maxWorkers === 0 || ep.command) continue;
    if (!existsSync(ep.worker)) problems.push(`endpoints.${ep.id}.worker: file not found: ${ep.worker}`);
    else if (statSync(ep.worker).isDirectory())
      problems.push(`endpoints.${ep.id}.worker: is a folder, not a file: ${ep.worker}`);
  }
  if (problems.length) throw fileError(config.file, `worker file missing in ${config.file}`, problems);
}

/** A command line split into words on spaces; single or double quotes group words (no other shell syntax). */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
