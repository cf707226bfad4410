import { describe, expect, it } from 'vitest';
import { ScriptedWorker, call, listening, until } from '../testing.test-helpers.js';

// workerMessagesPerSecond: N allows a burst of N messages, then one every 1000/N ms.
describe('worker message rate (workerMessagesPerSecond)', () => {
  it('does not count the results of jobs the worker holds: a busy worker is not throttled by its own completions', async () => {
    await using t = await listening({ workerMessagesPerSecond: 1 });
    const w = await ScriptedWorker.connect(t.url, { concurrency: 20 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push((await call(t.server, 'POST', '/v2/echo/run', { body: { input: { i } } })).body.id);
    for (let i = 0; i < 20; i++) await w.next('job.assign');
    for (const id of ids) w.send({ type: 'job.complete', id, attempt: 1, output: id });
    // Counted at 1 a second, the 20 results would take at least 19 s: far past this bound, however loaded the machine.
    await until(() => w.count('job.ack') === 20, 5000, 'every result acknowledged');
    for (const id of ids) expect((await t.server.options.store.get(id))?.status).toBe('COMPLETED');
    await w.close();
  });

  it('still counts everything else, and a result of a job the worker does not hold', async () => {
    await using t = await listening({ workerMessagesPerSecond: 2 });
    const w = await ScriptedWorker.connect(t.url);
    await w.next('welcome');
    const t0 = Date.now();
    w.send({ type: 'job.complete', id: 'not-held', attempt: 1, output: 1 });
    for (let i = 0; i < 3; i++) w.send({ type: 'ping', t: i });
    await until(() => w.count('pong') === 3, 5000, 'three pongs');
    // The hello and the stray result use the burst; the pings are applied 500 ms apart after it.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    await w.close();
  });
});
