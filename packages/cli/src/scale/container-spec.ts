import { deploySettings } from '../build/deploy.js';
import type { ResolvedEndpoint } from '../config/index.js';
import type { HttpPorts } from '../internal/http-workers.js';
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
 * this worker (`gpusPerWorker`), as a `DeviceRequests` entry with their ids and a label. `ports`: a load-balancing
 * endpoint's worker (`"type": "http"`): `PORT` and `PORT_HEALTH`, on the host network (the proxy reaches its server
 * at 127.0.0.1:`PORT`), and neither `BERTH_URL` nor a worker token.
 */
export function containerSpec(
  s: ScaledEndpoint,
  name: string,
  owner: Owner,
  url: string,
  workerToken: string,
  gpus: readonly string[] = [],
  lane?: 'batch',
  ports?: HttpPorts,
): ContainerSpec {
  const deploy = deploySettings(s.ep);
  // A load-balancing worker is an HTTP server of its own: no control-plane credential, RunPod's names for its ids.
  const env: Record<string, string> = ports
    ? {
        BERTH_ENDPOINT_ID: s.ep.id,
        BERTH_WORKER_ID: name,
        RUNPOD_ENDPOINT_ID: s.ep.id,
        RUNPOD_POD_ID: name,
        PORT: String(ports.port),
        PORT_HEALTH: String(ports.healthPort),
      }
    : {
        ...deploy.env,
        BERTH_URL: url,
        BERTH_ENDPOINT_ID: s.ep.id,
        BERTH_WORKER_ID: name,
        BERTH_WORKER_TOKEN: workerToken,
        ...(lane ? { BERTH_LANE: lane } : {}),
      };
  const docker = s.ep.docker;
  const network = docker.network ?? (ports ? 'host' : undefined);
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
      ...(network !== undefined ? { NetworkMode: network } : {}),
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
