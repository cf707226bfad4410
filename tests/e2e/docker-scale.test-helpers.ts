import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { killAll, startServe, type ServeProcess } from '../durability/cluster.test-helpers.js';
import type { Docker } from './docker.test-helpers.js';

/**
 * Helpers of the `berth serve --scale docker` tests: starting and cleaning up one run, the containers of one run
 * (by its `--scale-name` label), a bounded wait, and a watch on a worker container's own `/ping` (through the
 * daemon's API socket, without blocking the event loop) to time its boot apart from Berth's part of a cold start.
 */

/** `berth serve --scale docker` on `config` (memory store, `--scale-name name`, info logs as the text lines tests read). */
export async function startScaleServe(
  config: string,
  work: string,
  name: string,
): Promise<{ serve: ServeProcess; base: string }> {
  const args = ['--store', 'memory', '--config', config, '--scale', 'docker', '--scale-name', name];
  const serve = await startServe(0, join(work, 'data'), [...args, '--log-level', 'info', '--log-format', 'pretty']);
  return { serve, base: `http://127.0.0.1:${serve.port}` };
}

/** After such a test: serve stopped, the run's containers removed, the daemon stopped (if the test started it), `work` gone. */
export async function stopScaleRun(docker: Docker | undefined, name: string, work: string): Promise<void> {
  await killAll();
  if (docker)
    for (const id of containers(docker, name, true)) spawnSync('docker', ['rm', '-f', id], { env: docker.env });
  await docker?.stop();
  rmSync(work, { recursive: true, force: true });
}

export function containers(docker: Docker, name: string, all = false): string[] {
  const out = docker.run(['ps', ...(all ? ['-a'] : []), '-q', '--filter', `label=berth.control-plane=${name}`]);
  return out ? out.split('\n') : [];
}

export async function waitFor<T>(
  what: string,
  ms: number,
  check: () => T | Promise<T>,
  log: () => string = () => '',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${log().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** `GET path` on the docker daemon's API (its unix socket, from `DOCKER_HOST` or the default one). */
function dockerApi(docker: Docker, path: string): Promise<unknown> {
  const host = docker.env['DOCKER_HOST'] ?? 'unix:///var/run/docker.sock';
  const socketPath = host.replace(/^unix:\/\//, '');
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method: 'GET' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(text));
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function pingStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/ping', method: 'GET', timeout: 1_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

export interface PingWatch {
  /** The container's name (the worker's id). */
  name: string;
  /** Wall-clock ms (Date.now) when it was first seen created, and when its /ping first answered 200. */
  seenAt: number;
  firstOkAt: number;
  /** Docker's own times (ms since the epoch): created, and its process started. */
  createdAt: number;
  startedAt: number;
}

/** Docker's RFC 3339 times carry nanoseconds; Date.parse wants milliseconds at most. */
const epochMs = (t: string) => Date.parse(t.replace(/\.(\d{3})\d*Z$/, '.$1Z'));

/**
 * Watches for the first container of the control plane `name` whose name contains `-<endpoint>-`, then polls its
 * `/ping` (on the `PORT_HEALTH` Berth gave it, host network) every 5 ms until a 200: when the worker was ready,
 * as near as a client on the same host can tell. Bounded by `timeoutMs`.
 */
export async function watchFirstPing(
  docker: Docker,
  name: string,
  endpoint: string,
  timeoutMs = 60_000,
): Promise<PingWatch> {
  const deadline = Date.now() + timeoutMs;
  const filters = encodeURIComponent(JSON.stringify({ label: [`berth.control-plane=${name}`] }));
  let found: { id: string; name: string; port: number; seenAt: number } | undefined;
  let last = '';
  while (!found) {
    if (Date.now() > deadline) throw new Error(`no ${endpoint} container in ${timeoutMs} ms (last inspect: ${last})`);
    const list = (await dockerApi(docker, `/containers/json?all=1&filters=${filters}`)) as {
      Id: string;
      Names: string[];
    }[];
    const c = list.find((x) => x.Names.some((n) => n.includes(`-${endpoint}-`)));
    const info = c && ((await dockerApi(docker, `/containers/${c.Id}/json`)) as { Config?: { Env?: string[] } });
    const env = info?.Config?.Env?.find((e) => e.startsWith('PORT_HEALTH='));
    if (c && env) {
      found = {
        id: c.Id,
        name: (c.Names[0] ?? '').replace(/^\//, ''),
        port: Number(env.split('=')[1]),
        seenAt: Date.now(),
      };
    } else {
      if (c) last = JSON.stringify(info).slice(0, 300);
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  while ((await pingStatus(found.port)) !== 200) {
    if (Date.now() > deadline) throw new Error(`${found.name}: no /ping 200 in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  const firstOkAt = Date.now();
  const info = (await dockerApi(docker, `/containers/${found.id}/json`)) as {
    Created: string;
    State: { StartedAt: string };
  };
  return {
    name: found.name,
    seenAt: found.seenAt,
    firstOkAt,
    createdAt: epochMs(info.Created),
    startedAt: epochMs(info.State.StartedAt),
  };
}
