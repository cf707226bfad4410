// The bench harness's own check (in process, no servers): a target that answers wrongly is reported as failing
// rather than measured. The smoke run of every real target is tests/bench/smoke.test.ts (system project).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { TINY } from './config.js';
import { request } from './lib/http.js';
import type { Proc } from './lib/proc.js';
import { runBench } from './lib/runner.js';
import type { Target } from './targets/index.js';

describe('bench harness', () => {
  it('reports a target whose no-op answer is wrong as an error, not as a figure', async () => {
    // An in-process "L0" that answers COMPLETED with the wrong output.
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: 'x', status: 'COMPLETED', output: { n: -1 } })),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const self = { pid: process.pid } as Proc;
    const broken: Target = {
      name: 'broken',
      description: 'answers the wrong output',
      workloads: ['runsync'],
      start: async () => ({
        readyMs: 0,
        base: (ep) => `${url}/v2/${ep}`,
        headers: {},
        serverProcs: () => [self],
        heapUsed: async () => NaN,
        storeBytes: async () => NaN,
        startWorker: async () => ({ proc: self, go: async () => {}, stop: async () => {} }),
        completed: async () => NaN,
        stop: async () => {},
      }),
    };
    try {
      expect((await request(`${url}/v2/echo/runsync`, 'POST', { input: { n: 1 } })).body.output).toEqual({ n: -1 });
      const [r] = await runBench([broken], TINY);
      expect(r!.errors).toHaveLength(1);
      expect(r!.errors[0]).toMatch(/wrong output for n=/);
      expect(r!.rounds['runsync_c50_rps']).toBeUndefined();
    } finally {
      server.close();
    }
  });
});
