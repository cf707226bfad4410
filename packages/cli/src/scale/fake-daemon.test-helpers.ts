import {
  DockerError,
  type ContainerDetails,
  type ContainerSpec,
  type ContainerSummary,
  type DockerApi,
} from './docker-api.js';

/** A container of a daemon in memory: what the listing shows, plus what it was created with. */
export type FakeContainer = ContainerSummary & { Env?: string[] };

/** `inspectContainer` over a map of containers (by id or by name); 404 when there is none. */
export function inspectFrom(containers: Map<string, FakeContainer>): DockerApi['inspectContainer'] {
  return async (idOrName: string): Promise<ContainerDetails> => {
    const c = [...containers.values()].find((x) => x.Id === idOrName || x.Names[0] === `/${idOrName}`);
    if (!c) throw new DockerError(404, `No such container: ${idOrName}`);
    const env: Record<string, string> = {};
    for (const kv of c.Env ?? []) env[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
    return { id: c.Id, name: c.Names[0]!.slice(1), image: c.Image, env, labels: c.Labels };
  };
}

/**
 * A daemon in memory as Docker behaves for the scaler: containers start and keep running, a create whose name is
 * taken answers 409, the listing applies the label filter, stop exits a container, and every call is recorded
 * (each create's spec by container name). `missingImage`: creates answer Docker's 404 "No such image";
 * `exitAtStart`: containers exit as soon as they start (a worker that crashes at once).
 */
export class FakeDaemon {
  readonly containers = new Map<string, FakeContainer>();
  readonly calls: string[] = [];
  readonly specs = new Map<string, ContainerSpec>();
  missingImage = false;
  exitAtStart = false;
  #next = 0;

  /** A container made outside the scaler (an earlier start, another deployment, a user's). */
  add(
    name: string,
    o: { labels?: Record<string, string>; env?: Record<string, string>; image?: string; state?: string },
  ): string {
    const id = `x${++this.#next}`;
    this.containers.set(id, {
      Id: id,
      Names: [`/${name}`],
      Image: o.image ?? 'ep-image',
      State: o.state ?? 'running',
      Labels: o.labels ?? {},
      Created: 1,
      Env: Object.entries(o.env ?? {}).map(([k, v]) => `${k}=${v}`),
    });
    return id;
  }

  byName(name: string): FakeContainer | undefined {
    return [...this.containers.values()].find((c) => c.Names[0] === `/${name}`);
  }

  api(): DockerApi {
    const api: Partial<DockerApi> = {
      describe: () => 'fake daemon',
      storageDriver: async () => 'overlay2',
      listContainers: async (labels: string[]) =>
        [...this.containers.values()].filter((c) =>
          labels.every((l) => c.Labels[l.slice(0, l.indexOf('='))] === l.slice(l.indexOf('=') + 1)),
        ),
      createContainer: async (name: string, spec: ContainerSpec) => {
        this.calls.push(`create ${name}`);
        if (this.missingImage) throw new DockerError(404, `No such image: ${spec.Image}:latest`);
        this.specs.set(name, spec);
        if (this.byName(name)) throw new DockerError(409, `Conflict. The container name "/${name}" is already in use`);
        const id = `c${++this.#next}`;
        this.containers.set(id, {
          Id: id,
          Names: [`/${name}`],
          Image: spec.Image,
          State: 'created',
          Labels: spec.Labels,
          Created: Math.floor(Date.now() / 1000),
          Env: spec.Env,
        });
        return id;
      },
      startContainer: async (id: string) =>
        void (this.containers.get(id)!.State = this.exitAtStart ? 'exited' : 'running'),
      stopContainer: async (id: string) => {
        this.calls.push(`stop ${this.containers.get(id)?.Names[0]?.slice(1)}`);
        const c = this.containers.get(id);
        if (c) c.State = 'exited';
      },
      removeContainer: async (id: string) => {
        this.calls.push(`remove ${this.containers.get(id)?.Names[0]?.slice(1) ?? id}`);
        this.containers.delete(id);
      },
      exitOf: async () => ({ exitCode: 0, tail: '' }),
      inspectContainer: inspectFrom(this.containers),
    };
    return api as DockerApi;
  }
}
