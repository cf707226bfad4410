import { createLogger } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../config/index.js';
import type { ContainerSpec, ContainerSummary, DockerApi } from './docker-api.js';
import { DockerScaler, type DockerScalerOptions } from './docker-scaler.js';
import { soleLease } from './scaling-lease.js';

/**
 * A daemon in memory whose containers exit as soon as they start (a worker that crashes at once), and whose
 * start call answers only when the test lets it: the listing shows the container exited while the call is pending.
 */
class CrashingDaemon {
  readonly containers = new Map<string, ContainerSummary>();
  readonly pendingStarts: (() => void)[] = [];
  #next = 0;

  api(): DockerApi {
    const api: Partial<DockerApi> = {
      describe: () => 'fake daemon',
      listContainers: async () => [...this.containers.values()],
      createContainer: async (name: string, spec: ContainerSpec) => {
        const id = `c${++this.#next}`;
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
      startContainer: (id: string) => {
        this.containers.get(id)!.State = 'exited';
        return new Promise<void>((resolve) => this.pendingStarts.push(resolve));
      },
      removeContainer: async (id: string) => void this.containers.delete(id),
      exitOf: async () => ({ exitCode: 1, tail: 'boom' }),
      stopContainer: async () => {},
    };
    return api as DockerApi;
  }
}

function scaler(daemon: CrashingDaemon, errors: string[]): DockerScaler {
  const config = resolveConfig(
    { endpoints: { crash: { worker: './crash.ts', maxWorkers: 1 } } },
    '/p/berth.config.json',
  );
  const server: DockerScalerOptions['server'] = {
    connectedWorkers: () => [],
    setExpectedWorkers: () => {},
    setHandlerBroken: () => {},
    health: async () => ({ jobs: { inQueue: 1, inProgress: 0 } }) as never,
    workerStopping: () => {},
    workerColdStart: () => {},
    workerStartFailed: () => {},
  };
  const logger = createLogger({ write: (line) => void errors.push(line) });
  return new DockerScaler({
    server,
    docker: daemon.api(),
    endpoints: [{ ep: config.endpoints[0]!, image: 'crash-image', workerToken: 'berth_wk_x' }],
    name: 'test',
    url: 'http://127.0.0.1:1',
    lease: soleLease,
    logger,
  });
}

describe('DockerScaler', () => {
  it('a container that exits before its start call returns is one crash, not two', async () => {
    const daemon = new CrashingDaemon();
    const lines: string[] = [];
    const s = scaler(daemon, lines);
    await s.tick(); // creates crash-1; its start call is pending
    await new Promise((r) => setTimeout(r, 10));
    expect(daemon.pendingStarts).toHaveLength(1);
    await s.tick(); // lists crash-1 as exited while the start call is still pending: left for later
    expect(daemon.containers.size).toBe(1);
    daemon.pendingStarts.shift()!();
    await new Promise((r) => setTimeout(r, 10));
    await s.tick(); // now the exit is handled: removed, one crash, backoff
    expect(daemon.containers.size).toBe(0);
    const crashes = lines.filter((l) => /next start in/.test(l));
    expect(crashes, lines.join('\n')).toHaveLength(1);
    expect(crashes[0]).toMatch(/next start in 0\.5 s \(crash 1 in a row\)/);
  });
});
