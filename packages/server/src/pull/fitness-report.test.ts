import type { HealthReply } from '@berth/protocol';
import type { LogFields, Logger } from '@berth/protocol/log';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type BerthServer } from '../server.js';

const KEY = 'k';
const TOKEN = 'tok';

/** Keeps the warn lines, drops the rest. */
function warnings(): { logger: Logger; lines: { msg: unknown; fields?: LogFields | undefined }[] } {
  const lines: { msg: unknown; fields?: LogFields | undefined }[] = [];
  const logger: Logger = {
    level: 'warn',
    debug() {},
    info() {},
    warn: (msg, fields) => void lines.push({ msg, fields }),
    error() {},
    child: () => logger,
  };
  return { logger, lines };
}

/** runpod-python's fitness report (`rp_fitness._report_unhealthy`) on the wire, against a real server. */
describe('pull protocol: fitness reports', () => {
  let server: BerthServer;
  let url = '';
  let log: ReturnType<typeof warnings>;
  beforeEach(async () => {
    log = warnings();
    server = createServer({
      apiKeys: [KEY],
      workerTokens: [TOKEN],
      endpoints: ['echo'],
      pullHoldMs: 100,
      logger: log.logger,
    });
    url = (await server.listen({ port: 0 })).url;
  });
  afterEach(() => server.close({ drainMs: 50 }));

  const worker = (path: string) => fetch(`${url}/v2/echo/${path}`, { headers: { authorization: TOKEN } });
  const health = async () =>
    (await (
      await fetch(`${url}/v2/echo/health`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as HealthReply;

  it('counts the worker unhealthy with its check and reason logged, until a worker of that id connects', async () => {
    const q = new URLSearchParams({
      status: 'unhealthy',
      check: 'check_gpu',
      reason: 'RuntimeError: GPU not available',
      runpod_version: '1.12.0',
    });
    const res = await worker(`ping/pod-1?${q}`);
    expect(res.status).toBe(200);
    expect((await health()).workers).toMatchObject({ unhealthy: 1, idle: 0 });
    // The Monitor view's worker series (sampled on read) shows it too.
    const mon = (await (
      await fetch(`${url}/v2/echo/monitor`, { headers: { authorization: `Bearer ${KEY}` } })
    ).json()) as { workers: { unhealthy: (number | null)[] } };
    expect(mon.workers.unhealthy.at(-1)).toBe(1);
    const line = log.lines.find((l) => String(l.msg).includes('fitness'));
    expect(line?.fields).toMatchObject({
      workerId: 'pod-1',
      endpointId: 'echo',
      check: 'check_gpu',
      reason: 'RuntimeError: GPU not available',
      runpodVersion: '1.12.0',
    });
    // The container restarted and passed its checks: its first poll clears the report.
    expect((await worker('job-take/pod-1?gpu=local&job_in_progress=0')).status).toBe(204);
    expect((await health()).workers).toMatchObject({ unhealthy: 0, idle: 1 });
  });

  it('keeps reports of several workers apart, and names an unnamed check', async () => {
    await worker('ping/pod-a?status=unhealthy');
    await worker('ping/pod-b?status=unhealthy&check=disk&reason=full');
    expect((await health()).workers.unhealthy).toBe(2);
    expect(log.lines.map((l) => l.fields?.['check'])).toEqual(['unnamed', 'disk']);
    // A plain ping is no report.
    await worker('ping/pod-c?gpu=local&runpod_version=1.12.0');
    expect((await health()).workers.unhealthy).toBe(2);
  });

  it('refuses a report without the worker token', async () => {
    const res = await fetch(`${url}/v2/echo/ping/pod-x?status=unhealthy&check=a&reason=b`);
    expect(res.status).toBe(401);
    expect((await health()).workers.unhealthy).toBe(0);
  });
});
