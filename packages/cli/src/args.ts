import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ENDPOINT_ID_RE } from '@berth/protocol';
import { isLogFormat, isLogLevel, LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from '@berth/protocol/log';
import { UsageError } from './internal/usage-error.js';

/** The option definitions `parseArgs` takes. */
export type FlagOptions = NonNullable<ParseArgsConfig['options']>;
type FlagValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * `parseArgs` in strict mode, with its errors turned into a `UsageError` that names the command.
 * Positionals are refused: no command takes any.
 */
export function parseFlags(command: string, argv: readonly string[], options: FlagOptions): FlagValues {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as FlagValues;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new UsageError(message.replace(/\. To specify a positional argument.*$/s, '.'), command);
  }
}

/** `--port`: a whole number from 0 to 65535 (0 picks any free port). */
export function parsePort(command: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535 (got "${value}")`, command);
  }
  return n;
}

/** `--host`: any non-empty host name or address. */
export function parseHost(command: string, value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  if (value.trim() === '') throw new UsageError('--host must not be empty', command);
  return value.trim();
}

/** `--endpoint a,b --endpoint c`: endpoint ids, each matching the endpoint id pattern; duplicates dropped. */
export function parseEndpointList(command: string, values: readonly string[] | undefined): string[] {
  const ids = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const id of ids) {
    if (!ENDPOINT_ID_RE.test(id)) {
      throw new UsageError(
        `--endpoint: "${id}" is not a valid endpoint id (lowercase letters, digits and "-", starting with a letter or digit, at most 63 characters)`,
        command,
      );
    }
  }
  return [...new Set(ids)];
}

export type { LogFormat, LogLevel };

/** `--log-level`, else `BERTH_LOG_LEVEL`, else `info`. */
export function parseLogLevel(command: string, value: string | undefined, env: NodeJS.ProcessEnv): LogLevel {
  const raw = value ?? env['BERTH_LOG_LEVEL'] ?? 'info';
  const where = value !== undefined ? '--log-level' : 'BERTH_LOG_LEVEL';
  if (!isLogLevel(raw)) {
    throw new UsageError(`${where} must be one of ${LOG_LEVELS.join(', ')} (got "${raw}")`, command);
  }
  return raw;
}

/** `--log-format`, else `BERTH_LOG_FORMAT`, else `fallback` (the command's default). */
export function parseLogFormat(
  command: string,
  value: string | undefined,
  env: NodeJS.ProcessEnv,
  fallback: LogFormat,
): LogFormat {
  const raw = value ?? env['BERTH_LOG_FORMAT'] ?? fallback;
  const where = value !== undefined ? '--log-format' : 'BERTH_LOG_FORMAT';
  if (!isLogFormat(raw)) {
    throw new UsageError(`${where} must be one of ${LOG_FORMATS.join(', ')} (got "${raw}")`, command);
  }
  return raw;
}
