import type { Logger } from '@berth/protocol/log';
import type { BerthServer, KeyStore, LbControl, Store } from '@berth/server';
import type { FlagOptions } from '../args.js';
import type { ResolvedConfig } from '../config/index.js';
import { UsageError } from '../internal/usage-error.js';
import type { ScaledEndpoint } from './container-spec.js';
import { batchLanePolicy, batchLaneViews, GpuAllocator, ScaleLoop } from '@berth/server/scaling';
import { DockerApi, dockerAddress } from './docker-api.js';
import { HttpWorkers } from '../internal/http-workers.js';
import { DockerPool } from './docker-pool.js';
import { WorkerTokens } from './worker-tokens.js';

/** `berth serve`'s scaling flags. */
export const SCALE_FLAGS: FlagOptions = {
  scale: { type: 'string' },
  image: { type: 'string', multiple: true },
  'scale-name': { type: 'string' },
  'worker-url': { type: 'string' },
};

export const SCALE_HELP = `      --scale docker      start and stop each endpoint's worker containers with its queue (minWorkers to
                          maxWorkers, scale to zero) through the Docker Engine API (DOCKER_HOST, else
                          /var/run/docker.sock; a remote tcp:// daemon needs DOCKER_TLS_VERIFY=1 and
                          DOCKER_CERT_PATH, or BERTH_DOCKER_INSECURE=1); needs --config; endpoints
                          without an image are not scaled
      --image <ep>=<image>
                          the image of an endpoint's containers (repeatable; default: its "image" in the config)
      --scale-name <name> the label naming this control plane on its containers; replicas share it (default berth)
      --worker-url <url>  BERTH_URL given to the containers (default: the address served; a balancer's address
                          in front of replicas)
`;

export interface ScaleArgs {
  /** `docker`, or undefined: no scaling. */
  mode: 'docker' | undefined;
  /** `--image` overrides by endpoint. */
  images: Record<string, string>;
  name: string;
  workerUrl: string | undefined;
}

/** Reads the scaling flags of `berth serve`. */
export function parseScaleArgs(v: Record<string, unknown>, env: NodeJS.ProcessEnv): ScaleArgs {
  const mode = v['scale'] as string | undefined;
  if (mode !== undefined && mode !== 'docker')
    throw new UsageError(`--scale: only "docker" is supported (got "${mode}")`, 'serve');
  const images: Record<string, string> = {};
  for (const pair of (v['image'] as string[] | undefined) ?? []) {
    const m = /^([a-z0-9][a-z0-9-]{0,62})=(\S+)$/.exec(pair);
    if (!m) throw new UsageError(`--image must be <endpoint>=<image>, like echo=echo-worker (got "${pair}")`, 'serve');
    images[m[1]!] = m[2]!;
  }
  const name = (v['scale-name'] as string | undefined) ?? 'berth';
  if (!/^[a-z0-9][a-z0-9_.-]{0,62}$/.test(name))
    throw new UsageError(`--scale-name must be lowercase letters, digits, ".", "_" or "-" (got "${name}")`, 'serve');
  if (mode === undefined && (Object.keys(images).length > 0 || v['worker-url'] !== undefined))
    throw new UsageError('--image and --worker-url apply with --scale docker', 'serve');
  if (mode === 'docker') {
    try {
      dockerAddress(env);
    } catch (err) {
      throw new UsageError((err as Error).message, 'serve');
    }
  }
  return { mode, images, name, workerUrl: v['worker-url'] as string | undefined };
}

/** Which endpoints of the config are scaled, and with which image. */
export function scaledImages(args: ScaleArgs, config: ResolvedConfig | undefined): Map<string, string> {
  if (args.mode === undefined) return new Map();
  if (!config) throw new UsageError('--scale docker needs --config <file> (the endpoints and their scaling)', 'serve');
  const ids = config.endpoints.map((e) => e.id);
  for (const ep of Object.keys(args.images))
    if (!ids.includes(ep))
      throw new UsageError(
        `--image ${ep}=...: "${ep}" is not an endpoint of ${config.file} (known: ${ids.join(', ')})`,
        'serve',
      );
  const out = new Map<string, string>();
  for (const ep of config.endpoints) {
    const image = args.images[ep.id] ?? ep.image;
    if (image !== undefined && ep.maxWorkers > 0) out.set(ep.id, image);
  }
  if (out.size === 0)
    throw new UsageError(
      `--scale docker: no endpoint of ${config.file} has an image (set "image" in the config, or --image <endpoint>=<image>)`,
      'serve',
    );
  return out;
}

export interface StartScalingOptions {
  args: ScaleArgs;
  config: ResolvedConfig;
  images: Map<string, string>;
  server: BerthServer;
  keyStore: KeyStore;
  store: Store;
  /** The address served (the default `BERTH_URL` of the containers). */
  url: string;
  logger: Logger;
  env: NodeJS.ProcessEnv;
  /** The box's GPUs (`gpuInventory`), when a scaled endpoint has `gpusPerWorker`. */
  gpuDevices?: readonly string[] | undefined;
}

/** The running scaler: `stop()` ends it (the containers keep running; the next start adopts them). */
export interface Scaling {
  stop(): Promise<void>;
}

/**
 * Starts the docker scaler: the scale loop over the Docker pool, under the store's scaling lease (an advisory
 * lock on PostgreSQL; else this process alone). The lease holder settles one stored worker token per scaled
 * endpoint (scoped to it, reused from its containers) and revokes the others (`WorkerTokens`).
 */
export async function startScaling(o: StartScalingOptions): Promise<Scaling> {
  const endpoints: ScaledEndpoint[] = [];
  for (const ep of o.config.endpoints) {
    const image = o.images.get(ep.id);
    if (image !== undefined) endpoints.push({ ep, image });
  }
  const { workers } = o.server;
  const gpus = o.gpuDevices && new GpuAllocator(o.gpuDevices, (ep) => workers.setGpus(ep, gpus!.holdings(ep)));
  const lb = o.server.lb;
  const http = endpoints.some((s) => lb.has(s.ep.id)) ? new HttpWorkers(lb) : undefined;
  const pool = new DockerPool({
    ...(gpus ? { gpus } : {}),
    ...(http ? { http } : {}),
    workers: o.server.workers,
    docker: new DockerApi(o.env),
    endpoints,
    name: o.args.name,
    url: o.args.workerUrl ?? o.url,
    tokens: new WorkerTokens(o.keyStore, o.args.name),
    logger: o.logger,
  });
  const lease = o.store.scalingLease?.(o.args.name);
  // Endpoints with a batch lane (issue #38): a second loop over the pool's lane containers, under the same lease.
  const laneEps = endpoints.map((s) => s.ep).filter((ep) => ep.batch !== undefined);
  const views = batchLaneViews(o.server, new Set(laneEps.map((ep) => ep.id)));
  const loops = [
    new ScaleLoop({
      server: views.interactive,
      pool,
      endpoints: endpoints.map((s) => s.ep),
      ...(gpus ? { gpus } : {}),
      ...(lease ? { lease } : {}),
      logger: o.logger,
      // Replicas sharing a store: a look between ticks would be a query per endpoint at zero; the tick only.
      ...(lease ? { wakeMs: 0 } : {}),
    }),
  ];
  if (laneEps.length > 0) {
    for (const ep of laneEps) workers.setBatchLane(ep.id, true);
    loops.push(
      new ScaleLoop({
        server: views.batch,
        pool: pool.batchLane,
        endpoints: laneEps.map((ep) => batchLanePolicy(ep, ep.batch!)),
        ...(gpus ? { gpus } : {}),
        ...(lease ? { lease } : {}),
        logger: o.logger.child({ lane: 'batch' }),
        wakeMs: 0,
      }),
    );
  }
  if (http) hookLoadBalancing(lb, loops[0]!, pool);
  for (const loop of loops) loop.start();
  return {
    stop: async () => {
      for (const loop of loops) await loop.stop();
      pool.close();
    },
  };
}

/**
 * Load-balancing endpoints' hooks of the proxy (`server.lb`): a request waiting with no worker makes the loop look
 * at once (a cold start begins); a worker failing its health checks is drained and stopped (the loop starts
 * another if requests still need one); `strict-resume` of a worker stopped while idle starts it again by name.
 */
export function hookLoadBalancing(lb: LbControl, loop: ScaleLoop, pool: DockerPool): void {
  lb.hooks.demand = () => void loop.tick();
  lb.hooks.unhealthy = (endpointId, workerId) => pool.stop(endpointId, workerId);
  lb.hooks.resume = (endpointId, workerId) => pool.startAs(endpointId, workerId);
}
