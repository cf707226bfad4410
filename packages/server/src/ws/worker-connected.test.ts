import { describe, expect, it } from 'vitest';
import { listening, ScriptedWorker } from '../testing.test-helpers.js';

describe("server.workers.on('connected')", () => {
  it('is called once a worker is welcomed, before any job, with its id and endpoint; not for a refused one', async () => {
    const seen: [string, string][] = [];
    await using s = await listening();
    s.server.workers.on('connected', (workerId, endpointId) => seen.push([workerId, endpointId]));
    const w = await ScriptedWorker.connect(s.url, { workerId: 'gpu-9' });
    await w.next('welcome');
    expect(seen).toEqual([['gpu-9', 'echo']]);
    const refused = await ScriptedWorker.connect(s.url, { workerId: 'other', endpointId: 'Not_An_Endpoint' });
    await refused.next('error');
    expect(seen).toEqual([['gpu-9', 'echo']]);
    await w.close();
    await refused.close();
  });
});
