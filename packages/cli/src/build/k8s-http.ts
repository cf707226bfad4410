import type { ResolvedEndpoint } from '../config/index.js';
import { podGpus } from './k8s.js';
import { toYaml, type YamlValue } from './yaml.js';

/** The proxy's defaults (packages/server/src/lb/options.ts), for the pods' grace period and the scaler note. */
const REQUEST_TIMEOUT_MS = 330_000;
const CONCURRENCY = 1;

/**
 * The `k8s/` folder of a load-balancing (`"type": "http"`) endpoint: a Deployment of its own image (`PORT` and
 * `PORT_HEALTH` set to the port its Dockerfile exposes, the container port declared, RunPod's worker variables,
 * a grace period long enough for a request in flight to finish) and a Service on that port. No ScaledObject: the
 * scaling route counts the requests through Berth's proxy, not those sent to this Service, so the header says what
 * Berth's scaler uses and how to scale on it in a cluster. Not run against a cluster here: structure checked by tests only.
 */
export function k8sHttpManifests(ep: ResolvedEndpoint, image: string, port: number): Record<string, string> {
  const name = `${ep.id}-worker`;
  const labels = { 'app.kubernetes.io/name': name, 'berth.endpoint': ep.id };
  const gpus = podGpus(ep);
  const timeoutS = Math.ceil((ep.http?.requestTimeoutMs ?? REQUEST_TIMEOUT_MS) / 1000);
  const concurrency = ep.http?.concurrency ?? ep.concurrency ?? CONCURRENCY;
  const deployment: YamlValue = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas: Math.max(1, ep.minWorkers),
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      template: {
        metadata: { labels },
        spec: {
          // A request in flight may run up to requestTimeoutMs: let it finish when a pod is stopped.
          terminationGracePeriodSeconds: timeoutS + 5,
          containers: [
            {
              name: 'worker',
              image,
              ports: [{ name: 'http', containerPort: port }],
              env: [
                { name: 'PORT', value: String(port) },
                { name: 'PORT_HEALTH', value: String(port) },
                { name: 'RUNPOD_ENDPOINT_ID', value: ep.id },
                { name: 'RUNPOD_POD_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              ...(gpus !== undefined ? { resources: { limits: { 'nvidia.com/gpu': gpus } } } : {}),
            },
          ],
        },
      },
    },
  };
  const service: YamlValue = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, labels },
    spec: {
      selector: { 'app.kubernetes.io/name': name },
      ports: [{ name: 'http', port, targetPort: 'http', protocol: 'TCP' }],
    },
  };
  const header = (what: string) =>
    `# ${what} for load-balancing endpoint ${ep.id} ("type": "http"), written by berth build (docs/load-balancing.md).\n`;
  return {
    'deployment.yaml':
      `${header('Worker Deployment')}` +
      `# Scaling: Berth's scaler runs these workers on requests, not jobs: ${ep.scaler?.type === 'queue-delay' ? 'queue-delay (one more worker while requests wait longer than its seconds)' : `request-count, ceil((requests waiting + in flight) / ${concurrency}) workers`},\n` +
      `# ${ep.minWorkers} to ${ep.maxWorkers}. GET /v2/${ep.id}/scaling counts only the requests through Berth's proxy; clients of this Service\n` +
      `# are not seen there, so no KEDA ScaledObject is written: scale on requests in flight per pod (e.g. KEDA's HTTP add-on,\n` +
      `# targetPendingRequests ${concurrency}).\n` +
      `# No readinessProbe on ${ep.http?.healthPath ?? '/ping'}: Kubernetes counts 204 ("initializing") as ready; add an exec probe if you need one.\n` +
      toYaml(deployment),
    'service.yaml': `${header('Service on the worker port')}${toYaml(service)}`,
  };
}
