import { silentLogger } from '@berth/protocol/log';
import { describe, expect, it } from 'vitest';
import { createServer } from '../server.js';
import { ScriptedWorker } from './scripted-worker.js';

describe('@berth/server/testing ScriptedWorker', () => {
  it('connects with the given token, gets a fresh worker id, and runs a job the test scripts', async () => {
    const server = createServer({ apiKeys: ['k'], workerTokens: ['t'], endpoints: ['ep'], logger: silentLogger });
    const { url } = await server.listen({ port: 0 });
    try {
      await expect(ScriptedWorker.connect(url, 'wrong', { endpointId: 'ep' })).rejects.toThrow('HTTP 401');
      const w = await ScriptedWorker.connect(url, 't', { endpointId: 'ep', concurrency: 2 });
      const welcome = await w.next('welcome');
      expect(welcome.workerId).toMatch(/^scripted-[0-9a-f]{8}$/);
      const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
      const answer = fetch(`${url}/v2/ep/runsync`, { method: 'POST', headers, body: '{"input":{"n":1}}' });
      const job = await w.next('job.assign');
      expect(job.input).toEqual({ n: 1 });
      w.send({ type: 'job.complete', id: job.id, attempt: job.attempt, output: { n: 2 } });
      expect(await (await answer).json()).toMatchObject({ id: job.id, status: 'COMPLETED', output: { n: 2 } });
      expect(w.count('job.assign')).toBe(1);
      await w.close();
      expect(w.closed).toBe(true);
    } finally {
      await server.close({ drainMs: 0 });
    }
  });
});
