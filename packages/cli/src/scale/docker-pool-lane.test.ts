import { createLogger } from '@berth/protocol/log';
import { describe, expect, it } from 'vitest';
import type { WorkerControl } from '@berth/server';
import { resolveConfig } from '../config/index.js';
import type { ContainerSpec, ContainerSummary, DockerApi } from './docker-api.js';
import { DockerPool } from './docker-pool.js';
import { inspectFrom } from './fake-daemon.test-helpers.js';

/** A daemon in memory whose containers start and keep running; it keeps each create call's spec by name. */
class Daemon {
  readonly containers = new Map<string, ContainerSummary>();
  readonly specs = new Map<string, ContainerSpec>();

  api(): DockerApi {
    const api: Partial<DockerApi> = {
      describe: () => 'fake daemon',
      listContainers: async () => [...this.containers.values()],
      createContainer: async (name: string, spec: ContainerSpec) => {
        const id = `c${this.containers.size + 1}`;
        this.specs.set(name, spec);
        this.containers.set(id, {
          Id: id,
          Names: [`/${name}`],
          Image: spec.Image,
          State: 'created',
          Labels: spec.Labels,
          Created: 0,
        });
        return id;
      },
      startContainer: async (id: string) => void (this.containers.get(id)!.State = 'running'),
      storageDriver: async () => 'overlay2',
      removeContainer: async (id: string) => void this.containers.delete(id),
      stopContainer: async () => {},
      inspectContainer: inspectFrom(this.containers),
    };
    return api as DockerApi;
  }
}

function pool(docker: DockerApi, lanes: string[]): DockerPool {
  const config = resolveConfig(
    { endpoints: { ep: { worker: './ep.ts', maxWorkers: 2, batch: { maxWorkers: 2 } } } },
    '/p/berth.config.json',
  );
  const workers = {
    connected: () => [],
    setExpected: () => {},
    setWaitReason: () => {},
    setLane: (id: string, lane: string | undefined) => void lanes.push(`${id} ${lane}`),
    startFailed: () => {},
    on: () => () => {},
  } as unknown as WorkerControl;
  return new DockerPool({
    workers,
    docker,
    endpoints: [{ ep: config.endpoints[0]!, image: 'ep-image' }],
    name: 'test',
    url: 'http://127.0.0.1:1',
    tokens: { deployment: async () => 'd0d0d0d0', settle: async () => ({ token: 'berth_wk_x', revoked: 0 }) },
    logger: createLogger({ write: () => {} }),
  });
}

const settle = () => new Promise((r) => setTimeout(r, 20));
const env = (spec: ContainerSpec | undefined) => spec?.Env.filter((e) => e.startsWith('BERTH_LANE=')) ?? [];

describe('DockerPool batch lane (issue #38)', () => {
  it('lane containers are named <...>-<ep>-batch-<n>, run with BERTH_LANE=batch, are registered as lane workers and listed apart', async () => {
    const daemon = new Daemon();
    const lanes: string[] = [];
    const p = pool(daemon.api(), lanes);
    expect(await p.refresh(0, true)).toBe(true);
    expect(await p.batchLane.refresh(0, false)).toBe(true); // the first pool's look
    p.batchLane.start('ep');
    p.start('ep');
    await settle();
    expect([...daemon.specs.keys()].sort()).toEqual(['test-d0d0d0d0-ep-1', 'test-d0d0d0d0-ep-batch-1']);
    expect(env(daemon.specs.get('test-d0d0d0d0-ep-batch-1'))).toEqual(['BERTH_LANE=batch']);
    expect(env(daemon.specs.get('test-d0d0d0d0-ep-1'))).toEqual([]);
    // Registered before the container is even created, so its hello finds it a lane worker.
    expect(lanes).toEqual(['test-d0d0d0d0-ep-batch-1 batch']);
    expect(p.list('ep').map((w) => w.id)).toEqual(['test-d0d0d0d0-ep-1']);
    expect(p.batchLane.list('ep').map((w) => w.id)).toEqual(['test-d0d0d0d0-ep-batch-1']);
    p.batchLane.start('ep');
    await settle();
    expect(p.batchLane.list('ep').map((w) => w.id)).toEqual(['test-d0d0d0d0-ep-batch-1', 'test-d0d0d0d0-ep-batch-2']);
    expect(p.list('ep')).toHaveLength(1);
  });

  it('a restarted control plane registers the lane containers it adopts at its first look', async () => {
    const daemon = new Daemon();
    const first = pool(daemon.api(), []);
    await first.refresh(0, true);
    first.batchLane.start('ep');
    first.start('ep');
    await settle();
    first.close();
    const lanes: string[] = [];
    const second = pool(daemon.api(), lanes);
    expect(await second.batchLane.refresh(0, false)).toBe(false); // no look of its own yet
    await second.refresh(0, true);
    expect(lanes).toEqual(['test-d0d0d0d0-ep-batch-1 batch']);
  });
});
