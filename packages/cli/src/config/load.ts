import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { fileError, resolveConfig } from './resolve.js';
import type { ResolvedConfig } from './types.js';
import { errorText } from '@berth/protocol/log';

/** Names tried, in order, when `--config` is not given. */
export const DEFAULT_CONFIG_FILES = [
  'berth.config.ts',
  'berth.config.mts',
  'berth.config.js',
  'berth.config.mjs',
  'berth.config.json',
] as const;

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
      throw fileError(abs, `cannot read config file ${abs}: ${errorText(err)}`);
    }
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw fileError(abs, `config file ${abs} is not valid JSON: ${errorText(err)}`);
    }
  } else if (['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'].includes(ext)) {
    let mod: Record<string, unknown>;
    try {
      const { tsImport } = await import('tsx/esm/api');
      mod = (await tsImport(pathToFileURL(abs).href, import.meta.url)) as Record<string, unknown>;
    } catch (err) {
      throw fileError(abs, `failed to load config file ${abs}: ${errorText(err)}`);
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
  await checkRateLimits(config);
  return config;
}

/** Checks `rateLimits` with the server's own rules (operation names, counts). */
async function checkRateLimits(config: ResolvedConfig): Promise<void> {
  if (!config.rateLimits) return;
  const problem = (await import('./rate-limits.js')).rateLimitsProblem(config.rateLimits);
  if (problem) throw fileError(config.file, `invalid config file ${config.file}`, [problem]);
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
      problems.push(errorText(err).replace(/^option /, ''));
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
