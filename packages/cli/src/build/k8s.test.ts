import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse } from 'yaml';
import { resolveConfig } from '../config/index.js';
import { deploySettings } from './deploy.js';
import { k8sManifests } from './k8s.js';
import { k8sHttpManifests } from './k8s-http.js';
import { toYaml } from './yaml.js';

// Structure only: no Kubernetes cluster or KEDA ran these manifests here.
function manifests(ep: Record<string, unknown>) {
  const [resolved] = resolveConfig(
    { endpoints: { echo: { worker: './echo.ts', ...ep } } },
    '/p/berth.config.json',
  ).endpoints;
  const files = k8sManifests(resolved!, deploySettings(resolved!), resolved!.image ?? 'echo-worker');
  const [scaled, auth] = parseAllDocuments(files['scaledobject.yaml']!).map((d) => d.toJS());
  return { deployment: parse(files['deployment.yaml']!), scaled, auth, files };
}

describe('berth build k8s/ manifests', () => {
  it('a Deployment: the image, the worker token from a Secret, the grace period from the drain deadline', () => {
    const { deployment } = manifests({ maxWorkers: 4, drainTimeoutMs: 60_000, concurrency: 2, image: 'reg/echo:1' });
    expect(deployment).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'echo-worker' } });
    expect(deployment.spec.replicas).toBe(0);
    expect(deployment.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'echo-worker' });
    expect(deployment.spec.template.metadata.labels).toMatchObject({ 'app.kubernetes.io/name': 'echo-worker' });
    const pod = deployment.spec.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBe(63);
    const [c] = pod.containers;
    expect(c.image).toBe('reg/echo:1');
    const env = Object.fromEntries(c.env.map((e: { name: string }) => [e.name, e]));
    expect(env.BERTH_WORKER_TOKEN.valueFrom).toEqual({ secretKeyRef: { name: 'echo-worker-token', key: 'token' } });
    expect(env.BERTH_WORKER_ID.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(env.BERTH_DRAIN_TIMEOUT_MS.value).toBe('60000');
    expect(env.BERTH_CONCURRENCY.value).toBe('2');
    expect(env.BERTH_ENDPOINT_ID.value).toBe('echo');
    expect(c.resources).toBeUndefined();
  });

  it('a KEDA ScaledObject: 0 to maxWorkers on desiredWorkers of the scaling route, bearer auth from a Secret', () => {
    const { scaled, auth } = manifests({ maxWorkers: 4, idleTimeoutMs: 30_000 });
    expect(scaled).toMatchObject({
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'ScaledObject',
      spec: { scaleTargetRef: { name: 'echo-worker' }, minReplicaCount: 0, maxReplicaCount: 4, cooldownPeriod: 30 },
    });
    expect(scaled.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds).toBe(30);
    expect(scaled.spec.triggers).toEqual([
      {
        type: 'metrics-api',
        metadata: {
          url: 'http://berth:8080/v2/echo/scaling',
          valueLocation: 'desiredWorkers',
          targetValue: '1',
          authMode: 'bearer',
        },
        authenticationRef: { name: 'echo-worker-keda' },
      },
    ]);
    expect(auth).toEqual({
      apiVersion: 'keda.sh/v1alpha1',
      kind: 'TriggerAuthentication',
      metadata: {
        name: 'echo-worker-keda',
        labels: { 'app.kubernetes.io/name': 'echo-worker', 'berth.endpoint': 'echo' },
      },
      spec: { secretTargetRef: [{ parameter: 'token', name: 'echo-worker-keda', key: 'api-key' }] },
    });
  });

  it('minWorkers and GPUs carry over', () => {
    const { scaled, deployment } = manifests({ minWorkers: 1, maxWorkers: 2, docker: { gpus: '2' } });
    expect(scaled.spec.minReplicaCount).toBe(1);
    expect(deployment.spec.template.spec.containers[0].resources).toEqual({ limits: { 'nvidia.com/gpu': 2 } });
    // gpusPerWorker: each pod asks that many (the device plugin gives each its own).
    const placed = manifests({ maxWorkers: 4, gpusPerWorker: 3 }).deployment;
    expect(placed.spec.template.spec.containers[0].resources).toEqual({ limits: { 'nvidia.com/gpu': 3 } });
  });

  it('toYaml writes what a YAML parser reads back unchanged', () => {
    const v = {
      a: 'yes',
      b: '010',
      c: 1.5,
      d: [{ x: 'a: b', y: [] }, 'plain', { z: {} }],
      'e.f/g': true,
      'h i': null,
      nested: { list: [[1, 2], { k: 'line\nbreak "quoted"' }] },
    };
    expect(parse(toYaml(v))).toEqual(v);
  });

  it('a load-balancing endpoint: a Deployment with the worker port and PORT, a Service on it, the scaler noted', () => {
    const [ep] = resolveConfig(
      {
        endpoints: {
          gen: {
            type: 'http',
            image: 'reg/gen:2',
            maxWorkers: 3,
            concurrency: 4,
            requestTimeoutMs: 60_000,
            gpusPerWorker: 1,
          },
        },
      },
      '/p/berth.config.json',
    ).endpoints;
    const files = k8sHttpManifests(ep!, 'reg/gen:2', 8080);
    expect(Object.keys(files).sort()).toEqual(['deployment.yaml', 'service.yaml']);
    const deployment = parse(files['deployment.yaml']!);
    expect(deployment.spec.replicas).toBe(1);
    const pod = deployment.spec.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBe(65);
    const [c] = pod.containers;
    expect(c.image).toBe('reg/gen:2');
    expect(c.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    const env = Object.fromEntries(c.env.map((e: { name: string }) => [e.name, e]));
    expect(env.PORT.value).toBe('8080');
    expect(env.PORT_HEALTH.value).toBe('8080');
    expect(env.RUNPOD_POD_ID.valueFrom).toEqual({ fieldRef: { fieldPath: 'metadata.name' } });
    expect(env).not.toHaveProperty('BERTH_WORKER_TOKEN'); // it never talks to the control plane
    expect(c.resources).toEqual({ limits: { 'nvidia.com/gpu': 1 } });
    const service = parse(files['service.yaml']!);
    expect(service).toMatchObject({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'gen-worker' } });
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(service.spec.ports).toEqual([{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }]);
    expect(files['deployment.yaml']).toContain('request-count, ceil((requests waiting + in flight) / 4) workers');
    expect(files['deployment.yaml']).toContain(
      'clients of this Service\n# are not seen there, so no KEDA ScaledObject is written',
    );
  });
});
