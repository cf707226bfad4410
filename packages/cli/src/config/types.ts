import type { BatchOptions, LbEndpointOptions, ModelConfig, RateLimitOptions, ScalerConfig } from '@berth/server';

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
   * Scaling: how the worker count follows the queue (RunPod's two scaler types).
   * `{"type": "request-count", "jobsPerWorker": 4}`: ceil((queued + running) / jobsPerWorker) workers;
   * `{"type": "queue-delay", "seconds": 4}`: one more worker whenever jobs have waited longer than `seconds`.
   * Default: `request-count` with `jobsPerWorker` = `concurrency` (1 when unset).
   */
  scaler?: ScalerConfig;
  /** Scaling: warm spare workers kept above demand while the endpoint has jobs (fal's buffer). Default 0. */
  bufferWorkers?: number;
  /**
   * `berth serve --scale docker`: the image its worker containers run (what `berth build` + `docker build`
   * made, e.g. `"echo-worker"`). `--image <endpoint>=<image>` overrides it. Default: none (not scaled).
   */
  image?: string;
  /** `berth serve --scale docker`: how its containers run. Default: Docker's defaults. */
  docker?: DockerRunConfig;
  /**
   * GPUs each worker gets for itself, from the box's inventory (`gpus` at the top level, else `nvidia-smi -L`):
   * a container gets them as Docker `DeviceRequests` with their ids, a `berth dev` process as
   * `CUDA_VISIBLE_DEVICES`. A worker starts only once that many are free (scale-down frees them). Not together
   * with `docker.gpus`. Default: none.
   */
  gpusPerWorker?: number;
  /**
   * The endpoint's batch lane (Batch Jobs, issue #38): `berth dev` and `berth serve --scale docker` start up to
   * `maxWorkers` workers that run its batches' requests only, from zero while a batch has requests queued or
   * running, back to zero after `idleTimeoutMs`; its other workers then take no batch request. Default: no lane
   * (batch requests take the other workers' spare capacity, never ahead of `/run` jobs).
   */
  batch?: { maxWorkers: number };
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
   * The endpoint's kind. `"queue"` (default): a handler behind the job queue (`/run`, `/runsync`, ...). `"http"`: a
   * load-balancing endpoint (RunPod's): each worker is an HTTP server of its own, started by `command` (`berth dev`)
   * or `image` (`berth serve --scale docker`) with `PORT` and `PORT_HEALTH` set (a free port each), health at
   * `healthPath`; requests to `/v2/<id>/lb/<path>` go to a ready worker's `<path>` (docs/load-balancing.md). For
   * it, `concurrency` is the requests one worker gets at once (default 1).
   */
  type?: 'queue' | 'http';
  /** `"type": "http"`: the health path on `PORT_HEALTH`: 200 ready, 204 initializing (no traffic), else unhealthy. Default `/ping`. */
  healthPath?: string;
  /** `"type": "http"`: a worker must answer within this, ms; else 504 `processing_timeout`. Default 330000 (RunPod's 5.5 min). */
  requestTimeoutMs?: number;
  /** `"type": "http"`: largest request body, bytes; else 413. Default 31457280 (RunPod's 30 MB). */
  maxBodyBytes?: number;
  /** `"type": "http"`: how long a request waits for a ready worker (cold start, all busy); then 400 `no_workers_available`. Default 120000 (RunPod's 2 min). */
  coldStartWaitMs?: number;
  /** `"type": "http"`: how long a `strict` affinity request waits for its busy worker; then 400 `worker_timeout`. Default 300000. */
  affinityWaitMs?: number;
  /**
   * Debian packages `berth build` installs in the endpoint's images (`apt-get install`), e.g. `["espeak-ng", "ffmpeg"]`
   * for a handler that spawns them. Default: none.
   */
  apt?: string[];
}

/**
 * `webhooks` of the config file: how failed webhook deliveries are retried (docs/webhooks.md). Default: RunPod's,
 * 2 retries 10 s apart. Delay before retry k: `retryDelayMs x retryBackoff^(k-1)`, at most `maxRetryDelayMs`.
 *
 * @example { "retries": 10, "retryDelayMs": 10000, "retryBackoff": 2, "maxRetryDelayMs": 3600000 } // about 1.4 h
 */
export interface WebhookSchedule {
  /** Retries after the first attempt, 0 to 100. Default 2. `--webhook-retries` overrides it. */
  retries?: number;
  /** ms before the first retry. Default 10000. */
  retryDelayMs?: number;
  /** Each retry waits this many times longer than the one before (1 to 10). Default 1 (constant). */
  retryBackoff?: number;
  /** Longest wait between two attempts, ms. Default 3600000 (1 h). */
  maxRetryDelayMs?: number;
}

/** How `berth serve --scale docker` runs an endpoint's containers. */
export interface DockerRunConfig {
  /** `docker run --network`: e.g. `"host"` (workers reach a control plane on 127.0.0.1). Default: Docker's. */
  network?: string | undefined;
  /** `docker run -v`: `"<host path>:<container path>[:ro]"` each. Default: none. */
  mounts?: string[] | undefined;
  /** `docker run --gpus`: `"all"` or a count like `"2"`, the same GPUs for every container (see `gpusPerWorker`). Default: none. */
  gpus?: string | undefined;
}

/** `gpus` of the config file: the box's GPUs that `gpusPerWorker` hands out. */
export interface GpuInventoryConfig {
  /** Device ids as `nvidia-smi -L` numbers them (`"0"`, `"1"`) or their UUIDs (`"GPU-…"`). */
  devices: string[];
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
  /** Retry schedule of webhook deliveries. Default: 2 retries, 10 s apart. */
  webhooks?: WebhookSchedule;
  /**
   * Rate limits of `berth dev` / `berth serve`: the `rateLimits` object `createServer` takes, per API key x endpoint
   * x operation per 10 s window (`docs/rate-limits.md`). `base` is merged over the defaults; `BERTH_RATE_LIMITS`
   * (`off`, `on` or a JSON object) is applied over it. Default: on, the server's limits.
   *
   * @example { "base": { "run": 5000, "purge-queue": 10 }, "perWorker": 100 }
   */
  rateLimits?: RateLimitOptions;
  /**
   * Batch Jobs limits of `berth dev` / `berth serve` (`createServer`'s `batches`, docs/api.md#batch-jobs): requests
   * queued in batches per endpoint (`maxQueued`, default 50,000), open batches per endpoint (`maxOpen`, 100),
   * requests per add call (`maxPerCall`, 10,000), how long an ended batch is kept (`retentionMs`, 7 days).
   *
   * @example { "maxQueued": 1000000, "retentionMs": 86400000 }
   */
  batches?: Partial<BatchOptions>;
  /**
   * The box's GPUs, handed out one set per worker to endpoints with `gpusPerWorker`. Default: what
   * `nvidia-smi -L` lists, when an endpoint needs GPUs.
   *
   * @example { "devices": ["0", "1", "2", "3"] }
   */
  gpus?: GpuInventoryConfig;
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
  /** `undefined`: `request-count` at `concurrency` jobs per worker. */
  scaler: ScalerConfig | undefined;
  bufferWorkers: number;
  /** The container image for `berth serve --scale docker`, if configured. */
  image: string | undefined;
  docker: DockerRunConfig;
  /** GPUs each worker gets for itself (0 or absent: none placed). */
  gpusPerWorker?: number;
  /** The batch lane, if configured: at most `maxWorkers` workers for batch jobs only. */
  batch?: { maxWorkers: number };
  /** `undefined`: leave it to the handler's `start({ concurrency })`. */
  concurrency: number | undefined;
  /** `undefined`: the worker's default (30 s; 7 s in `berth build` images). */
  drainTimeoutMs: number | undefined;
  /** Debian packages for the image. */
  apt: string[];
  /** A `"type": "http"` (load-balancing) endpoint: its proxy settings (`createServer({ lb })`). */
  http?: LbEndpointOptions;
}

export interface ResolvedConfig {
  /** Absolute path of the config file. */
  file: string;
  /** Its folder: the cwd of every worker process. */
  dir: string;
  endpoints: ResolvedEndpoint[];
  /** As in the file (checked by `loadConfig` with the server's rules). */
  models: Record<string, ModelConfig>;
  /** As in the file; undefined when it has no `webhooks` section. */
  webhooks?: WebhookSchedule;
  /** As in the file (checked by `loadConfig` with the server's rules); undefined when it has no `rateLimits`. */
  rateLimits?: RateLimitOptions;
  /** Batch Jobs limits as in the file (each unset one keeps the server's default). */
  batches?: Partial<BatchOptions>;
  /** The `gpus` inventory as in the file; undefined: discovered with `nvidia-smi -L` when an endpoint needs GPUs. */
  gpus?: GpuInventoryConfig;
}
