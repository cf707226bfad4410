import type { RateLimitOptions, ServerOptions } from '@berth/server';
import { UsageError } from './internal/usage-error.js';
import { mergeRateLimits, rateLimitsProblem } from './config/rate-limits.js';

const ALLOWABLE = ['loopback', 'private', 'link-local'] as const;
type Allowable = (typeof ALLOWABLE)[number];

export const EDGE_ENV_HELP = `  BERTH_WEBHOOK_SECRET    sign webhooks with this Standard Webhooks secret (whsec_...; default: unsigned)
  BERTH_WEBHOOK_ALLOW     non-public webhook targets to allow: loopback, private, link-local, comma-separated,
                          or none (default: loopback for berth dev, none for berth serve)
  BERTH_RATE_LIMITS       off to turn rate limits off (local benchmarks), on, or a JSON object such as
                          {"base":{"run":5000},"perWorker":100} (createServer's rateLimits), applied over the
                          config file's "rateLimits" (docs/rate-limits.md); default on
  BERTH_PUBLIC_URL        base of output file URLs, e.g. https://berth.example.com (default: http://<Host header>)
  BERTH_FILES_SECRET      secret signing output file URLs (default: kept in <data-dir>/files/.url-secret)
  BERTH_JOB_TOKEN_SECRET  secret job tokens are signed with, the same on every replica (default: derived from
                          the output file URL secret)
  BERTH_TRUST_TRACEPARENT off: a request's W3C traceparent starts a new trace linked to the caller's instead of
                          continuing it (callers cannot force sampling); default on (docs/observability.md)
  BERTH_MAX_BODY_BYTES_IN_FLIGHT
                          bytes of request bodies held at once; past it 503 overloaded (default 268435456,
                          256 MiB)
  BERTH_MAX_CONNECTIONS   open connections, clients and workers together (default 10000)
`;

/**
 * Webhook and rate-limit options from the environment (`docs/webhooks.md`, `docs/rate-limits.md`); `rateLimits` is
 * the config file's (`fileRateLimits`) with `BERTH_RATE_LIMITS` over it.
 */
export function edgeServerOptions(
  env: NodeJS.ProcessEnv,
  command: 'dev' | 'serve',
  fileRateLimits?: RateLimitOptions,
): Pick<
  ServerOptions,
  | 'webhooks'
  | 'rateLimits'
  | 'publicUrl'
  | 'filesSecret'
  | 'jobTokenSecret'
  | 'maxBodyBytesInFlight'
  | 'maxConnections'
  | 'trustTraceparent'
> {
  // Output file URLs (docs/output-storage.md).
  const publicUrl = env['BERTH_PUBLIC_URL']?.trim();
  if (publicUrl && !/^https?:\/\/[^/]/.test(publicUrl))
    throw new UsageError(`BERTH_PUBLIC_URL must be an http(s) URL (got "${publicUrl}")`, command);
  const filesSecret = env['BERTH_FILES_SECRET']?.trim();
  if (filesSecret !== undefined && filesSecret !== '' && filesSecret.length < 16)
    throw new UsageError('BERTH_FILES_SECRET must be at least 16 characters', command);
  const jobTokenSecret = env['BERTH_JOB_TOKEN_SECRET']?.trim();
  if (jobTokenSecret !== undefined && jobTokenSecret !== '' && jobTokenSecret.length < 16)
    throw new UsageError('BERTH_JOB_TOKEN_SECRET must be at least 16 characters', command);
  const files = {
    ...(publicUrl ? { publicUrl } : {}),
    ...(filesSecret ? { filesSecret } : {}),
    ...(jobTokenSecret ? { jobTokenSecret } : {}),
  };
  const secret = env['BERTH_WEBHOOK_SECRET']?.trim();
  if (secret && !/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/.test(secret)) {
    throw new UsageError('BERTH_WEBHOOK_SECRET must look like whsec_<base64 of 24 to 64 random bytes>', command);
  }
  const rawAllow = env['BERTH_WEBHOOK_ALLOW']?.trim();
  let allow: Allowable[] = command === 'dev' ? ['loopback'] : [];
  if (rawAllow !== undefined && rawAllow !== '') {
    const parts = rawAllow
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '' && s !== 'none');
    for (const p of parts) {
      if (!(ALLOWABLE as readonly string[]).includes(p))
        throw new UsageError(`BERTH_WEBHOOK_ALLOW: "${p}" is not one of ${ALLOWABLE.join(', ')}, none`, command);
    }
    allow = parts as Allowable[];
  }
  const limits = envRateLimits(env['BERTH_RATE_LIMITS']?.trim(), command);
  // Memory and connection bounds (docs/api.md, limits).
  const bounds: Pick<ServerOptions, 'maxBodyBytesInFlight' | 'maxConnections'> = {};
  for (const [name, key] of [
    ['BERTH_MAX_BODY_BYTES_IN_FLIGHT', 'maxBodyBytesInFlight'],
    ['BERTH_MAX_CONNECTIONS', 'maxConnections'],
  ] as const) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    if (!/^[1-9]\d{0,15}$/.test(raw))
      throw new UsageError(`${name} must be a positive whole number (got "${raw}")`, command);
    bounds[key] = Number(raw);
  }
  const trust = env['BERTH_TRUST_TRACEPARENT']?.trim().toLowerCase();
  if (trust !== undefined && trust !== '' && trust !== 'on' && trust !== 'off')
    throw new UsageError(`BERTH_TRUST_TRACEPARENT must be on or off (got "${trust}")`, command);
  return {
    webhooks: { allow, ...(secret ? { secret } : {}) },
    ...(trust === 'on' || trust === 'off' ? { trustTraceparent: trust === 'on' } : {}),
    rateLimits: mergeRateLimits(fileRateLimits, limits),
    ...files,
    ...bounds,
  };
}

/** `BERTH_RATE_LIMITS`: `on`, `off`, or a JSON `rateLimits` object checked by the server's rules. */
function envRateLimits(raw: string | undefined, command: string): RateLimitOptions | undefined {
  if (raw === undefined || raw === '') return undefined;
  const word = raw.toLowerCase();
  if (word === 'on' || word === 'off') return { enabled: word === 'on' };
  const usage = (why: string) =>
    new UsageError(
      `BERTH_RATE_LIMITS must be on, off or a JSON object like {"base":{"run":5000},"perWorker":100}: ${why}`,
      command,
    );
  if (!raw.startsWith('{')) throw usage(`got "${raw}"`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw usage(`not valid JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const problem = rateLimitsProblem(value as RateLimitOptions);
  if (problem) throw usage(problem);
  return value as RateLimitOptions;
}
