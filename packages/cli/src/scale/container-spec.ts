import { deploySettings } from '../build/deploy.js';
import type { ResolvedEndpoint } from '../config/index.js';
import type { ContainerSpec } from './docker-api.js';

/**
 * Labels on every container a scaler starts: the control plane that owns it (`--scale-name`), the deployment
 * (an id stored with the data: two deployments sharing a scale name on one daemon leave each other's containers
 * alone) and the endpoint it serves.
 */
export const LABEL_CONTROL_PLANE = 'berth.control-plane';
export const LABEL_DEPLOYMENT = 'berth.deployment';
export const LABEL_ENDPOINT = 'berth.endpoint';
/** The GPUs a container was given (`gpusPerWorker`), comma-separated: a later start that adopts it holds them. */
export const LABEL_GPUS = 'berth.gpus';

/** What one endpoint's containers need beyond its config. */
export interface ScaledEndpoint {
  ep: ResolvedEndpoint;
  image: string;
}

/** Whose containers: the scale name and the deployment id. */
export interface Owner {
  controlPlane: string;
  deployment: string;
}

/**
 * The container of worker `name` of an endpoint: the image `berth build` made, the endpoint's environment
 * (`BERTH_URL`, its worker token, concurrency and drain deadline as `deploy.json` has them), the labels, the
 * config's `docker` settings (network, mounts, GPUs), the stop timeout from `deploy.json`, `--init` (the signal
 * reaches node) and no restart policy (the scaler restarts, with backoff). `gpus`: the devices the allocator gave
 * this worker (`gpusPerWorker`), as a `DeviceRequests` entry with their ids and a label.
 */
export function containerSpec(
  s: ScaledEndpoint,
  name: string,
  owner: Owner,
  url: string,
  workerToken: string,
  gpus: readonly string[] = [],
  lane?: 'batch',
): ContainerSpec {
  const deploy = deploySettings(s.ep);
  const env: Record<string, string> = {
    ...deploy.env,
    BERTH_URL: url,
    BERTH_ENDPOINT_ID: s.ep.id,
    BERTH_WORKER_ID: name,
    BERTH_WORKER_TOKEN: workerToken,
    ...(lane ? { BERTH_LANE: lane } : {}),
  };
  const docker = s.ep.docker;
  return {
    Image: s.image,
    Env: Object.entries(env).map(([k, v]) => `${k}=${v}`),
    Labels: {
      [LABEL_CONTROL_PLANE]: owner.controlPlane,
      [LABEL_DEPLOYMENT]: owner.deployment,
      [LABEL_ENDPOINT]: s.ep.id,
      ...(gpus.length > 0 ? { [LABEL_GPUS]: gpus.join(',') } : {}),
    },
    StopTimeout: deploy.stopTimeoutSeconds,
    HostConfig: {
      ...(docker.network !== undefined ? { NetworkMode: docker.network } : {}),
      ...(docker.mounts?.length ? { Binds: [...docker.mounts] } : {}),
      RestartPolicy: { Name: 'no' },
      Init: true,
      ...(gpus.length > 0
        ? { DeviceRequests: [{ Driver: 'nvidia', DeviceIDs: [...gpus], Capabilities: [['gpu']] }] }
        : docker.gpus !== undefined
          ? {
              DeviceRequests: [
                { Driver: '', Count: docker.gpus === 'all' ? -1 : Number(docker.gpus), Capabilities: [['gpu']] },
              ],
            }
          : {}),
    },
  };
}
