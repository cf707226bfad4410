import type { ResolvedEndpoint } from '../config/index.js';
import type { DeploySettings } from './deploy.js';
import { toYaml, type YamlValue } from './yaml.js';

/** Where the workers and KEDA reach the control plane, unless the user edits it: a Service named `berth`. */
export const K8S_CONTROL_PLANE_URL = 'http://berth:8080';

/** Each pod its own GPUs: gpusPerWorker (the device plugin places them), else docker.gpus ("all": one). */
export function podGpus(ep: ResolvedEndpoint): number | undefined {
  if (ep.gpusPerWorker) return ep.gpusPerWorker;
  if (ep.docker.gpus === undefined) return undefined;
  return ep.docker.gpus === 'all' ? 1 : Number(ep.docker.gpus);
}

/**
 * The `k8s/` folder `berth build` writes next to `deploy.json`: a Deployment of the endpoint's image (the worker
 * token from a Secret, `terminationGracePeriodSeconds` from the drain deadline, `replicas: 0` for KEDA to set)
 * and a KEDA ScaledObject whose `metrics-api` trigger reads `desiredWorkers` from `GET /v2/<endpoint>/scaling`
 * (the same scaling policy as `berth dev` and `berth serve --scale docker`), with a TriggerAuthentication for the
 * API key. Not run against a cluster here: structure checked by tests only.
 */
export function k8sManifests(ep: ResolvedEndpoint, deploy: DeploySettings, image: string): Record<string, string> {
  const name = `${ep.id}-worker`;
  const labels = { 'app.kubernetes.io/name': name, 'berth.endpoint': ep.id };
  const gpus = podGpus(ep);
  const env: YamlValue[] = [
    { name: 'BERTH_URL', value: K8S_CONTROL_PLANE_URL },
    { name: 'BERTH_ENDPOINT_ID', value: ep.id },
    { name: 'BERTH_WORKER_ID', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'BERTH_WORKER_TOKEN', valueFrom: { secretKeyRef: { name: `${name}-token`, key: 'token' } } },
    ...Object.entries(deploy.env).map(([k, v]) => ({ name: k, value: v })),
  ];
  const deployment: YamlValue = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas: 0,
      selector: { matchLabels: { 'app.kubernetes.io/name': name } },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: deploy.kubernetes.terminationGracePeriodSeconds,
          containers: [
            {
              name: 'worker',
              image,
              env,
              ...(gpus !== undefined ? { resources: { limits: { 'nvidia.com/gpu': gpus } } } : {}),
            },
          ],
        },
      },
    },
  };
  const scaledObject: YamlValue = {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'ScaledObject',
    metadata: { name, labels },
    spec: {
      scaleTargetRef: { name },
      minReplicaCount: ep.minWorkers,
      maxReplicaCount: ep.maxWorkers,
      pollingInterval: 5,
      // Scale to zero after the idle timeout (KEDA's cooldown applies to the last replica only) ...
      cooldownPeriod: Math.max(1, Math.ceil(ep.idleTimeoutMs / 1000)),
      advanced: {
        horizontalPodAutoscalerConfig: {
          // ... and between 1 and max, the HPA's scale-down window (default 300 s) is the idle timeout too.
          behavior: { scaleDown: { stabilizationWindowSeconds: Math.ceil(ep.idleTimeoutMs / 1000) } },
        },
      },
      triggers: [
        {
          type: 'metrics-api',
          metadata: {
            url: `${K8S_CONTROL_PLANE_URL}/v2/${ep.id}/scaling`,
            valueLocation: 'desiredWorkers',
            // One replica per desired worker: the HPA wants ceil(desiredWorkers / 1) replicas.
            targetValue: '1',
            authMode: 'bearer',
          },
          authenticationRef: { name: `${name}-keda` },
        },
      ],
    },
  };
  const triggerAuth: YamlValue = {
    apiVersion: 'keda.sh/v1alpha1',
    kind: 'TriggerAuthentication',
    metadata: { name: `${name}-keda`, labels },
    spec: { secretTargetRef: [{ parameter: 'token', name: `${name}-keda`, key: 'api-key' }] },
  };
  const header = (what: string) =>
    `# ${what} for endpoint ${ep.id}, written by berth build (docs/deployment.md, "Scaling in production").\n` +
    `# BERTH_URL and the trigger's url assume a Service "berth" on port 8080 in front of berth serve: edit both if not.\n`;
  return {
    'deployment.yaml':
      `${header('Worker Deployment')}# Secret ${name}-token (key "token"): the endpoint's worker token, e.g.\n` +
      `#   kubectl create secret generic ${name}-token --from-literal=token=$(berth keys create --worker --endpoints ${ep.id})\n` +
      toYaml(deployment),
    'scaledobject.yaml':
      `${header('KEDA ScaledObject')}# Secret ${name}-keda (key "api-key"): an API key allowed this endpoint (read-only is enough), e.g.\n` +
      `#   kubectl create secret generic ${name}-keda --from-literal=api-key=$(berth keys create --read-only --endpoints ${ep.id})\n` +
      `# Needs KEDA 2.13 or later (authMode bearer).\n` +
      `${toYaml(scaledObject)}---\n${toYaml(triggerAuth)}`,
  };
}
