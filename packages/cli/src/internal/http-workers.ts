import { createServer } from 'node:net';
import type { LbControl } from '@berth/server';

/** Where one HTTP worker listens: `PORT` (its server) and `PORT_HEALTH` (its `/ping`). */
export interface HttpPorts {
  port: number;
  healthPort: number;
}

/**
 * The pools' side of load-balancing endpoints (`berth dev`'s processes, `berth serve --scale docker`'s containers
 * on the host network): a free port for each HTTP worker (`PORT`; `PORT_HEALTH` is the same port, RunPod's
 * default when it is unset), its registration with the proxy (`server.lb`), its drain and its release.
 */
export class HttpWorkers {
  readonly #lb: LbControl;
  readonly #host: string;
  readonly #ports = new Map<string, HttpPorts>();

  constructor(lb: LbControl, host = '127.0.0.1') {
    this.#lb = lb;
    this.#host = host;
  }

  has(endpointId: string): boolean {
    return this.#lb.has(endpointId);
  }

  /** A free port for the worker (one no other worker of this process holds), registered with the proxy. */
  async prepare(endpointId: string, workerId: string): Promise<HttpPorts> {
    const held = new Set([...this.#ports.values()].map((p) => p.port));
    let port = await freePort(this.#host);
    while (held.has(port)) port = await freePort(this.#host);
    const ports = { port, healthPort: port };
    this.#ports.set(workerId, ports);
    this.#lb.add(endpointId, workerId, { host: this.#host, ...ports });
    return ports;
  }

  /**
   * A worker started by an earlier process (an adopted container) that listens on `port`: registered as it is.
   * False when its port is not a valid one (it gets no traffic; the pool replaces it).
   */
  adopt(endpointId: string, workerId: string, port: string | undefined): boolean {
    const n = Number(port);
    if (!Number.isInteger(n) || n <= 0 || n > 65535) return false;
    const ports = { port: n, healthPort: n };
    this.#ports.set(workerId, ports);
    this.#lb.add(endpointId, workerId, { host: this.#host, ...ports });
    return true;
  }

  /** The environment of the worker process: `PORT` and `PORT_HEALTH`. */
  env(workerId: string): Record<string, string> {
    const p = this.#ports.get(workerId);
    return p ? { PORT: String(p.port), PORT_HEALTH: String(p.healthPort) } : {};
  }

  /** No new request for it; resolves when its in-flight ones are done. */
  drain(workerId: string): Promise<void> {
    return this.#lb.drain(workerId);
  }

  /** Its process is gone for good. `scaledDown`: stopped while idle (`strict-resume` may bring it back). */
  removed(workerId: string, scaledDown: boolean): void {
    this.#ports.delete(workerId);
    this.#lb.remove(workerId, scaledDown);
  }
}

/** A port the OS says is free now (listen on 0, read it, close). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, host, () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}
