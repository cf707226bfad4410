import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError, describeValue, ENDPOINT_ID_RE } from '@berth/protocol';
import type { ModelConfig, RateLimitOptions } from '@berth/server';
import type { ResolvedConfig } from './types.js';
import { HTTP_ONLY_FIELDS, HttpFields, httpProblems, lbOptions } from './http-endpoint.js';

/** The config file is missing, unreadable or invalid. `berth` prints the message and exits with code 2. */
export function fileError(file: string, message: string, problems: string[] = []): ConfigError {
  return new ConfigError(message, { file, problems });
}

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
  'scaler',
  'bufferWorkers',
  'image',
  'docker',
  'gpusPerWorker',
  'type',
  ...HTTP_ONLY_FIELDS,
  'batch',
];

const WEBHOOK_FIELDS = ['retries', 'retryDelayMs', 'retryBackoff', 'maxRetryDelayMs'];

/** The fields of `createServer`'s `batches` (Batch Jobs limits, `BatchOptions`). */
const BATCH_LIMIT_FIELDS = ['maxQueued', 'maxOpen', 'maxPerCall', 'retentionMs'];

/** The fields of `createServer`'s `rateLimits` (`RateLimitOptions`). */
export const RATE_LIMIT_FIELDS: readonly string[] = [
  'enabled',
  'base',
  'perWorker',
] satisfies (keyof RateLimitOptions)[];

/** Requests per 10 s window: the largest accepted, far above any real limit. */
const MAX_RATE = 1_000_000_000;

/** The `rateLimits` object of `createServer`; operation names and the rest are checked by the server's rules in `loadConfig`. */
const RateLimitsSchema = z.strictObject(
  {
    enabled: z.boolean({ error: (i) => `must be true or false (got ${describeValue(i.input)})` }).optional(),
    base: z
      .record(z.string(), int(0, MAX_RATE), {
        error: (i) => `must be an object like {"run": 5000, "purge-queue": 10} (got ${describeValue(i.input)})`,
      })
      .optional(),
    perWorker: int(0, MAX_RATE).optional(),
  },
  {
    error: (i) =>
      `must be an object like {"base": {"run": 5000}, "perWorker": 100} or {"enabled": false} (got ${describeValue(i.input)})`,
  },
);

/** A Debian package name, optionally pinned (`ffmpeg`, `espeak-ng=1.51+dfsg-10`). */
const APT_PACKAGE_RE = /^[a-z0-9][a-z0-9+.-]*(=[A-Za-z0-9.+~:-]+)?$/;
const AptPackage = z.string().regex(APT_PACKAGE_RE, {
  error: (i) => `must be a Debian package name like "ffmpeg" (got ${describeValue(i.input)})`,
});

const ScalerSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({
      type: z.literal('request-count'),
      jobsPerWorker: int(1, 1024).optional(),
    }),
    z.strictObject({
      type: z.literal('queue-delay'),
      seconds: z
        .number({ error: (i) => `must be a number of seconds (got ${describeValue(i.input)})` })
        .positive({ error: (i) => `must be more than 0 (got ${describeValue(i.input)})` })
        .max(3600, { error: (i) => `must be at most 3600 (got ${describeValue(i.input)})` }),
    }),
  ],
  {
    error: (i) =>
      `must be {"type": "queue-delay", "seconds": 4} or {"type": "request-count", "jobsPerWorker": 4} (got ${gotScaler(i.input)})`,
  },
);

/** What a bad scaler is: its `type` when it is an object, else the value. */
function gotScaler(v: unknown): string {
  return v !== null && typeof v === 'object' && 'type' in v ? `type ${describeValue(v.type)}` : describeValue(v);
}

/** `<host path>:<container path>[:ro|:rw]`, both paths absolute. */
const MOUNT_RE = /^\/[^:]*:\/[^:]*(:(ro|rw))?$/;
const DockerSchema = z.strictObject(
  {
    network: z
      .string({ error: (i) => `must be a network name like "host" (got ${describeValue(i.input)})` })
      .min(1, 'must not be empty')
      .optional(),
    mounts: z
      .array(
        z.string().regex(MOUNT_RE, {
          error: (i) =>
            `must be "<host path>:<container path>[:ro]" like "/srv/models:/models:ro" (got ${describeValue(i.input)})`,
        }),
        { error: (i) => `must be a list like ["/srv/models:/models:ro"] (got ${describeValue(i.input)})` },
      )
      .optional(),
    gpus: z
      .string({ error: (i) => `must be "all" or a count like "1" (got ${describeValue(i.input)})` })
      .regex(/^(all|[1-9][0-9]*)$/, {
        error: (i) => `must be "all" or a count like "1" (got ${describeValue(i.input)})`,
      })
      .optional(),
  },
  {
    error: (i) =>
      `must be an object like {"network": "host", "mounts": ["/srv/models:/models:ro"], "gpus": "all"} (got ${describeValue(i.input)})`,
  },
);

/** `batch` of an endpoint: its batch lane (issue #38). */
const laneCount = (i: { input: unknown }) =>
  `must be a whole number of lane workers from 1 to 64 (got ${describeValue(i.input)})`;
const BatchLaneSchema = z.strictObject(
  {
    maxWorkers: z
      .number({ error: laneCount })
      .int({ error: laneCount })
      .min(1, { error: laneCount })
      .max(64, { error: laneCount }),
  },
  {
    error: (i) =>
      `must be an object like {"maxWorkers": 2} (workers started for batch jobs only) (got ${describeValue(i.input)})`,
  },
);

/** A GPU as `nvidia-smi -L` names it: its index or its UUID. */
const GPU_DEVICE_RE = /^[A-Za-z0-9][A-Za-z0-9:._-]{0,99}$/;
const GpusSchema = z.strictObject(
  {
    devices: z
      .array(
        z.string().regex(GPU_DEVICE_RE, {
          error: (i) => `must be a device index like "0" or a UUID like "GPU-5f1c…" (got ${describeValue(i.input)})`,
        }),
        { error: (i) => `must be a list like ["0", "1"] (got ${describeValue(i.input)})` },
      )
      .min(1, 'must list at least one device')
      .refine((d) => new Set(d).size === d.length, 'must not list a device twice'),
  },
  { error: (i) => `must be an object like {"devices": ["0", "1", "2", "3"]} (got ${describeValue(i.input)})` },
);

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
      scaler: ScalerSchema.optional(),
      bufferWorkers: int(0, 64).optional(),
      image: z
        .string({ error: (i) => `must be an image name like "echo-worker" (got ${describeValue(i.input)})` })
        .regex(/^[a-z0-9][a-z0-9._/:@-]*$/, {
          error: (i) => `must be an image name like "echo-worker" or "registry/echo:1" (got ${describeValue(i.input)})`,
        })
        .optional(),
      docker: DockerSchema.optional(),
      gpusPerWorker: int(1, 64).optional(),
      ...HttpFields,
      batch: BatchLaneSchema.optional(),
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
    for (const p of httpProblems(ep)) ctx.addIssue({ code: 'custom', path: [p.path], message: p.message });
    if (ep.type !== 'http' && (ep.worker === undefined) === (ep.command === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['worker'],
        message:
          'give either "worker" (a handler file, like "./handler.ts") or "command" (like "python3 handler.py"), exactly one',
      });
    }
    if (ep.type === 'http' && ep.batch !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['batch'],
        message: 'a batch lane is for queue endpoints: a "type": "http" endpoint takes no batches',
      });
    }
    if (ep.workers !== undefined && (ep.minWorkers !== undefined || ep.maxWorkers !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['workers'],
        message: 'give either "workers" (a fixed count) or "minWorkers"/"maxWorkers" (scaling), not both',
      });
    }
    if (ep.gpusPerWorker !== undefined && ep.docker?.gpus !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['gpusPerWorker'],
        message:
          'give either "gpusPerWorker" (each worker its own GPUs) or "docker.gpus" (every container the same GPUs), not both',
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

const ConfigSchema = z
  .strictObject(
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
      webhooks: z
        .strictObject(
          {
            retries: int(0, 100).optional(),
            retryDelayMs: int(0, 86_400_000).optional(),
            retryBackoff: z.number().min(1).max(10).optional(),
            maxRetryDelayMs: int(0, 7 * 86_400_000).optional(),
          },
          {
            error: (i) => `must be an object like {"retries": 10, "retryBackoff": 2} (got ${describeValue(i.input)})`,
          },
        )
        .optional(),
      rateLimits: RateLimitsSchema.optional(),
      batches: z
        .strictObject(
          {
            maxQueued: int(0, 100_000_000).optional(),
            maxOpen: int(0, 1_000_000).optional(),
            maxPerCall: int(1, 1_000_000).optional(),
            retentionMs: int(0, 365 * 86_400_000).optional(),
          },
          {
            error: (i) =>
              `must be an object like {"maxQueued": 200000, "maxPerCall": 10000} (got ${describeValue(i.input)})`,
          },
        )
        .optional(),
      gpus: GpusSchema.optional(),
    },
    { error: (i) => `must be an object like {"endpoints": {...}} (got ${describeValue(i.input)})` },
  )
  .superRefine((c, ctx) => {
    // With devices listed, an endpoint needing more per worker than the box has could never start a worker.
    const n = c.gpus?.devices.length;
    if (n === undefined) return;
    for (const [id, ep] of Object.entries(c.endpoints))
      if ((ep.gpusPerWorker ?? 0) > n)
        ctx.addIssue({
          code: 'custom',
          path: ['endpoints', id, 'gpusPerWorker'],
          message: `must be at most the ${n} device(s) of "gpus" (got ${ep.gpusPerWorker})`,
        });
  });

const TOP_LEVEL_FIELDS = ['endpoints', 'models', 'webhooks', 'rateLimits', 'batches', 'gpus'];
/** The known fields of a top-level section, for an unknown-field message. */
const SECTION_FIELDS = new Map<string, readonly string[]>([
  ['gpus', ['devices']],
  ['batches', BATCH_LIMIT_FIELDS],
  ['webhooks', WEBHOOK_FIELDS],
  ['rateLimits', RATE_LIMIT_FIELDS],
]);
/** The known fields of an endpoint's nested objects. */
const NESTED_FIELDS = new Map<string, readonly string[]>([
  ['batch', ['maxWorkers']],
  ['docker', ['network', 'mounts', 'gpus']],
  ['scaler', ['type', 'seconds (queue-delay)', 'jobsPerWorker (request-count)']],
]);

function formatIssue(issue: z.ZodError['issues'][number]): string {
  const path = issue.path.map(String);
  if (issue.code === 'invalid_key') {
    return `${path.slice(0, -1).join('.')}: "${String(path.at(-1))}" is not a valid endpoint id (use lowercase letters, digits and "-", starting with a letter or digit, at most 63 characters)`;
  }
  if (issue.code === 'unrecognized_keys') {
    const known =
      path.length === 0
        ? TOP_LEVEL_FIELDS
        : (SECTION_FIELDS.get(String(path[0])) ??
          (path.length > 2 ? NESTED_FIELDS.get(String(path.at(-1))) : undefined) ??
          ENDPOINT_FIELDS);
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
    ...(parsed.data.webhooks ? { webhooks: stripUndefined(parsed.data.webhooks) } : {}),
    ...(parsed.data.rateLimits ? { rateLimits: stripUndefined(parsed.data.rateLimits) } : {}),
    ...(parsed.data.batches ? { batches: stripUndefined(parsed.data.batches) } : {}),
    ...(parsed.data.gpus ? { gpus: { devices: parsed.data.gpus.devices } } : {}),
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
        worker: command ? (commandFiles?.[0] ?? file) : ep.worker !== undefined ? resolve(dir, ep.worker) : file,
        ...(command ? { command, commandFiles: commandFiles ?? [] } : {}),
        workers: minWorkers,
        minWorkers,
        maxWorkers,
        idleTimeoutMs: ep.idleTimeoutMs,
        scaler: ep.scaler,
        bufferWorkers: ep.bufferWorkers ?? 0,
        image: ep.image,
        docker: ep.docker ?? {},
        ...(ep.gpusPerWorker !== undefined ? { gpusPerWorker: ep.gpusPerWorker } : {}),
        ...(ep.batch !== undefined ? { batch: { maxWorkers: ep.batch.maxWorkers } } : {}),
        concurrency: ep.concurrency,
        drainTimeoutMs: ep.drainTimeoutMs,
        apt: ep.apt ?? [],
        ...(ep.type === 'http' ? { http: lbOptions(ep) } : {}),
      };
    }),
  };
}

/** The object without its undefined fields (`exactOptionalPropertyTypes`). */
function stripUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}

/** A command line split into words on spaces; single or double quotes group words (no other shell syntax). */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}
