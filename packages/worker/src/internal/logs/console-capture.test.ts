import { beforeEach, describe, expect, it, vi } from 'vitest';

type Mod = typeof import('./console-capture.js');
let mod: Mod;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeEach(async () => {
  vi.resetModules(); // each test starts from a process that has not tracked yet
  mod = await import('./console-capture.js');
});

describe('console capture: context tracking starts with the first console call from a job', () => {
  it('jobs that never write to the console leave tracking off; a call outside any job does not start it', async () => {
    const got: string[] = [];
    await Promise.all(
      ['a', 'b', 'c'].map((job) =>
        mod.withConsoleForwarding(
          (_level, message) => got.push(`${job}:${message}`),
          async () => {
            await sleep(2);
            return job;
          },
        ),
      ),
    );
    console.log('outside any job');
    expect(got).toEqual([]);
    expect(mod.consoleTrackingStarted()).toBe(false);
  });

  it('a single job logging only after an await is attributed, then concurrent jobs are attributed by context', async () => {
    const got: string[] = [];
    const run = (job: string, fn: () => Promise<void>) =>
      mod.withConsoleForwarding((level, message) => got.push(`${job}:${level}:${message}`), fn);
    await run('solo', async () => {
      await sleep(2);
      console.info('late line');
    });
    expect(mod.consoleTrackingStarted()).toBe(true);
    await Promise.all(
      ['x', 'y'].map((job) =>
        run(job, async () => {
          await sleep(job === 'x' ? 5 : 1);
          console.error('done', job);
        }),
      ),
    );
    expect(got.sort()).toEqual(['solo:info:late line', 'x:error:done x', 'y:error:done y']);
  });

  it('a synchronous first call enters the job context: its later lines keep the job, the caller gets its own back', async () => {
    const got: string[] = [];
    const pending = mod.withConsoleForwarding(
      (level, message) => got.push(`a:${level}:${message}`),
      async () => {
        console.log('sync');
        await sleep(2);
        console.warn('after');
      },
    );
    console.log('caller, same tick');
    await pending;
    console.log('caller, later');
    expect(got).toEqual(['a:info:sync', 'a:warn:after']);
  });
});
