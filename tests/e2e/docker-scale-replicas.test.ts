import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startServe, type ServeProcess } from '../durability/cluster.test-helpers.js';
import { PG_TEST_URL, replicaFixture, roundRobinProxy } from '../durability/replicas.test-helpers.js';
import { buildBasicImage, dockerUnavailable, startDocker, type Docker } from './docker.test-helpers.js';

/**
 * Two `berth serve --scale docker` replicas on one PostgreSQL database, workers reaching them through a TCP
 * balancer: only the holder of the scaling lease starts containers; killed with SIGKILL mid-burst, the other takes
 * the lease within seconds, adopts the containers (no duplicates, none orphaned), finishes the jobs and scales to 0.
 */
const dockerSkip = dockerUnavailable();
const { skip: pgSkip, dir, schema } = await replicaFixture('docker-scale');
const skip = dockerSkip ?? pgSkip;
const IMAGE = 'berth-scale-test/sleep';
const NAME = `r${process.pid}`;
let docker: Docker;

function containers(all = false): number {
  const out = docker.run(['ps', ...(all ? ['-a'] : []), '-q', '--filter', `label=berth.control-plane=${NAME}`]);
  return out ? out.split('\n').length : 0;
}

async function waitFor(what: string, ms: number, check: () => boolean | Promise<boolean>, log = ''): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${log.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.skipIf(skip !== undefined)(
  `two replicas scaling one docker daemon${skip ? ` (skipped: ${skip})` : ''}`,
  () => {
    beforeAll(async () => {
      docker = await startDocker();
      if (docker.env['DOCKER_HOST']) process.env['DOCKER_HOST'] = docker.env['DOCKER_HOST'];
      buildBasicImage(docker, 'sleep', IMAGE, dir);
    }, 600_000);

    afterAll(async () => {
      if (!docker) return;
      const ids = docker.run(['ps', '-aq', '--filter', `label=berth.control-plane=${NAME}`]);
      for (const id of ids ? ids.split('\n') : []) spawnSync('docker', ['rm', '-f', id], { env: docker.env });
      await docker.stop();
    }, 60_000);

    it('kill -9 of the replica holding the scaling lease: the other adopts its containers, none doubled or orphaned', async () => {
      const ports: number[] = []; // filled as each replica binds the port the OS gave it; the proxy reads it per connection
      const proxy = await roundRobinProxy(ports);
      const cfg = join(dir, 'berth.config.json');
      const sleep = { worker: './sleep.ts', maxWorkers: 3, idleTimeoutMs: 1000, concurrency: 1, image: IMAGE };
      writeFileSync(cfg, JSON.stringify({ endpoints: { sleep: { ...sleep, docker: { network: 'host' } } } }));
      const args = (i: number) => [
        ...['--store', 'postgres', '--database-url', PG_TEST_URL, '--database-schema', schema, '--config', cfg],
        ...['--scale', 'docker', '--scale-name', NAME, '--worker-url', proxy.url, '--log-level', 'info'],
        ...['--log-format', 'pretty'], // the lines this test reads, as text (key=value fields)
        ...['--data-dir', join(dir, `r${i}`)],
      ];
      const serves: ServeProcess[] = [];
      for (let i = 0; i < 2; i++) {
        serves.push(await startServe(0, join(dir, `r${i}`), args(i)));
        ports.push(serves[i]!.port);
      }
      const holds = (s: ServeProcess) => /scaling worker containers with/.test(s.text);
      await waitFor('one replica to take the scaling lease', 20_000, () => serves.some(holds));
      expect(serves.filter(holds).length).toBe(1);
      const leader = serves.find(holds)!;
      const other = serves.find((s) => s !== leader)!;

      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await api(proxy.url, 'POST', '/v2/sleep/run', { input: { ms: 4000 } })).json['id'] as string);
      let most = 0;
      const watch = setInterval(() => (most = Math.max(most, containers())), 250);
      try {
        await waitFor('3 containers', 120_000, () => containers() === 3, leader.text);
        await waitFor('a job to start', 60_000, async () => {
          return (
            (await api(proxy.url, 'GET', '/v2/sleep/health')).json['jobs'] !== undefined &&
            ((await api(proxy.url, 'GET', '/v2/sleep/health')).json['jobs'] as { inProgress: number }).inProgress > 0
          );
        });
        const killedAt = Date.now();
        await leader.kill('SIGKILL');
        await waitFor('the other replica to take the lease', 15_000, () => holds(other), other.text);
        const takeoverMs = Date.now() - killedAt;
        console.log(`[docker-scale-replicas] lease taken over ${takeoverMs} ms after the kill`);
        expect(takeoverMs).toBeLessThan(10_000);
        expect(other.text).toMatch(/scaling worker containers with \S+ controlPlane=\S+ found=3/);
        const survivor = `http://127.0.0.1:${ports[serves.indexOf(other)]}`;
        await waitFor(
          'every job to complete',
          180_000,
          async () => {
            for (const id of ids)
              if ((await api(survivor, 'GET', `/v2/sleep/status/${id}`)).json['status'] !== 'COMPLETED') return false;
            return true;
          },
          other.text,
        );
        await waitFor('scale to zero', 60_000, () => containers(true) === 0, other.text);
      } finally {
        clearInterval(watch);
        await proxy.close();
      }
      expect(most).toBe(3);
      expect(other.text.match(/adopted worker container/g)?.length).toBe(3);
    }, 400_000);
  },
);
