import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { request as tlsRequest } from 'node:https';
import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The client certificate and the CA of a daemon reached over TLS (`DOCKER_CERT_PATH`'s ca.pem, cert.pem, key.pem). */
interface DockerTls {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

type DockerAddress = { socketPath: string } | { host: string; port: number; tls?: DockerTls };

/**
 * Where the Docker Engine API answers: `DOCKER_HOST` (`unix:///path` or `tcp://host:port`), else the default
 * socket. Over TCP the scaler sends worker tokens, so a daemon that is not on a loopback address needs TLS
 * (`DOCKER_TLS_VERIFY=1`, certificates in `DOCKER_CERT_PATH`, default `~/.docker`: ca.pem, cert.pem, key.pem), or
 * `BERTH_DOCKER_INSECURE=1` to accept plain TCP knowingly.
 */
export function dockerAddress(env: NodeJS.ProcessEnv): DockerAddress {
  const host = env['DOCKER_HOST'];
  if (host === undefined || host === '') return { socketPath: '/var/run/docker.sock' };
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  const m = /^(?:tcp|http|https):\/\/([^:/]+|\[[^\]]+\]):(\d+)\/?$/.exec(host);
  if (!m) throw new Error(`DOCKER_HOST=${host}: expected unix:///path/to/docker.sock or tcp://host:port`);
  const address = { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
  const verify = env['DOCKER_TLS_VERIFY'];
  if (verify !== undefined && verify !== '' && verify !== '0') {
    const dir = env['DOCKER_CERT_PATH'] || join(homedir(), '.docker');
    const read = (file: string) => {
      try {
        return readFileSync(join(dir, file));
      } catch (err) {
        throw new Error(
          `DOCKER_TLS_VERIFY is set but ${join(dir, file)} cannot be read (${(err as Error).message}): DOCKER_CERT_PATH names the folder of ca.pem, cert.pem and key.pem`,
        );
      }
    };
    return { ...address, tls: { ca: read('ca.pem'), cert: read('cert.pem'), key: read('key.pem') } };
  }
  if (env['DOCKER_CERT_PATH'])
    throw new Error(
      `DOCKER_CERT_PATH is set but DOCKER_TLS_VERIFY is not: set DOCKER_TLS_VERIFY=1 to reach ${host} over TLS`,
    );
  if (!isLoopback(address.host) && env['BERTH_DOCKER_INSECURE'] !== '1')
    throw new Error(
      `DOCKER_HOST=${host} is not a loopback address and has no TLS: worker tokens would cross the network in clear text. Set DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem), or BERTH_DOCKER_INSECURE=1 to accept plain TCP`,
    );
  return address;
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/** The Docker daemon answered with an error status (`status`: 404 for a missing image or container). */
export class DockerError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'DockerError';
  }
}

/** One container as `GET /containers/json` lists it. */
export interface ContainerSummary {
  Id: string;
  Names: string[];
  Image: string;
  /** `created`, `running`, `exited`, `dead`, ... */
  State: string;
  Labels: Record<string, string>;
  /** Unix seconds. */
  Created: number;
}

/** A container as `GET /containers/<id>/json` describes it: what the scaler compares with this start's config. */
export interface ContainerDetails {
  id: string;
  name: string;
  /** The image it was created from, as named at create (`Config.Image`). */
  image: string;
  env: Record<string, string>;
  labels: Record<string, string>;
}

/** What `createContainer` sends (`POST /containers/create`), the fields Berth uses. */
export interface ContainerSpec {
  Image: string;
  Env: string[];
  Labels: Record<string, string>;
  StopTimeout: number;
  HostConfig: {
    NetworkMode?: string;
    Binds?: string[];
    RestartPolicy: { Name: 'no' };
    Init: boolean;
    /** `Count` (-1: all) for `docker.gpus`; `DeviceIDs` for the devices `gpusPerWorker` placed. */
    DeviceRequests?: { Driver: string; Count?: number; DeviceIDs?: string[]; Capabilities: string[][] }[];
  };
}

/**
 * The few Docker Engine API calls the scaler makes, over node:http (unix socket or TCP): no client library.
 * Every call has a timeout, so a daemon that hangs is an error, not a stuck scaler.
 */
export class DockerApi {
  readonly #address: DockerAddress;

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.#address = dockerAddress(env);
  }

  /** Where the daemon is, for log lines. */
  describe(): string {
    if ('socketPath' in this.#address) return `unix://${this.#address.socketPath}`;
    const { host, port, tls } = this.#address;
    return `tcp://${host.includes(':') ? `[${host}]` : host}:${port}${tls ? ' (TLS)' : ''}`;
  }

  async ping(): Promise<void> {
    await this.#call('GET', '/_ping', undefined, 5_000);
  }

  /** The daemon's storage driver (`overlay2`, `vfs`, ...: `GET /info`'s `Driver`). */
  async storageDriver(): Promise<string> {
    return ((await this.#call('GET', '/info', undefined, 10_000)) as { Driver?: string }).Driver ?? '';
  }

  /** Whether the image is in the daemon (no pull: images come from `berth build` + `docker build`, or a registry pull you run). */
  async hasImage(image: string): Promise<boolean> {
    try {
      await this.#call('GET', `/images/${encodeURIComponent(image)}/json`);
      return true;
    } catch (err) {
      if (err instanceof DockerError && err.status === 404) return false;
      throw err;
    }
  }

  /** Containers (running or not) carrying every label given (`key=value`). */
  async listContainers(labels: string[]): Promise<ContainerSummary[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: labels }));
    return (await this.#call('GET', `/containers/json?all=1&filters=${filters}`)) as ContainerSummary[];
  }

  /** Creates a container; returns its id. */
  async createContainer(name: string, spec: ContainerSpec): Promise<string> {
    const r = (await this.#call('POST', `/containers/create?name=${encodeURIComponent(name)}`, spec)) as { Id: string };
    return r.Id;
  }

  async startContainer(id: string): Promise<void> {
    await this.#call('POST', `/containers/${id}/start`);
  }

  /** SIGTERM, then SIGKILL after `timeoutS`; resolves once the container has stopped. */
  async stopContainer(id: string, timeoutS: number): Promise<void> {
    await this.#call('POST', `/containers/${id}/stop?t=${timeoutS}`, undefined, (timeoutS + 30) * 1000);
  }

  /** What a container was created with (its name, image, environment, labels) and its state. */
  async inspectContainer(idOrName: string): Promise<ContainerDetails> {
    const r = (await this.#call('GET', `/containers/${encodeURIComponent(idOrName)}/json`)) as {
      Id: string;
      Name: string;
      Config: { Image: string; Env: string[] | null; Labels: Record<string, string> | null };
    };
    const env: Record<string, string> = {};
    for (const kv of r.Config.Env ?? []) {
      const i = kv.indexOf('=');
      if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return { id: r.Id, name: r.Name.replace(/^\//, ''), image: r.Config.Image, env, labels: r.Config.Labels ?? {} };
  }

  async removeContainer(id: string): Promise<void> {
    try {
      await this.#call('DELETE', `/containers/${id}?force=1`);
    } catch (err) {
      if (!(err instanceof DockerError && err.status === 404)) throw err;
    }
  }

  /** The exit code and the last lines of output of a stopped container (for the log line saying why it died). */
  async exitOf(id: string): Promise<{ exitCode: number; tail: string }> {
    const info = (await this.#call('GET', `/containers/${id}/json`)) as { State: { ExitCode: number; Error: string } };
    const raw = (await this.#call(
      'GET',
      `/containers/${id}/logs?stdout=1&stderr=1&tail=8`,
      undefined,
      10_000,
      true,
    )) as Buffer;
    const tail = `${demux(raw)}${info.State.Error ? `\n${info.State.Error}` : ''}`.trim();
    return { exitCode: info.State.ExitCode, tail };
  }

  #call(method: string, path: string, body?: unknown, timeoutMs = 30_000, raw = false): Promise<unknown> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const { tls, ...address } = 'tls' in this.#address ? this.#address : { ...this.#address, tls: undefined };
    const send = tls ? tlsRequest : request;
    return new Promise((resolve, reject) => {
      const req = send(
        {
          ...address,
          ...(tls ?? {}),
          method,
          path: `/v1.41${path}`,
          headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {},
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const buf = Buffer.concat(chunks);
            const status = res.statusCode ?? 0;
            if (status >= 400) {
              let message = buf.toString('utf8').trim();
              try {
                message = (JSON.parse(message) as { message?: string }).message ?? message;
              } catch {
                // not JSON: the text as it is
              }
              return reject(new DockerError(status, message || `HTTP ${status}`));
            }
            if (raw) return resolve(buf);
            const text = buf.toString('utf8');
            resolve(text && res.headers['content-type']?.includes('json') ? JSON.parse(text) : text);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`docker ${method} ${path}: no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }
}

/** Docker's log stream of a container without a TTY: frames of [stream, 0, 0, 0, size (4 bytes BE)] + data. */
function demux(buf: Buffer): string {
  let out = '';
  let i = 0;
  while (i + 8 <= buf.length) {
    const size = buf.readUInt32BE(i + 4);
    out += buf.subarray(i + 8, i + 8 + size).toString('utf8');
    i += 8 + size;
  }
  return i === 0 ? buf.toString('utf8') : out;
}
