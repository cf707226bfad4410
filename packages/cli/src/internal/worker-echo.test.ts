import { describe, expect, it } from 'vitest';
import { createLogger } from '@berth/protocol/log';
import { withoutWorkerEcho } from './worker-echo.js';

describe('withoutWorkerEcho', () => {
  it("moves the control plane's job lines of workers that print their own to debug; keeps the rest", () => {
    const seen: string[] = [];
    const base = createLogger({ level: 'debug', sink: (r) => seen.push(`${r.level} ${r.msg}`) });
    const log = withoutWorkerEcho(base, (id) => id === 'echo-1');
    log.info('job completed', { jobId: 'j', workerId: 'echo-1' });
    log.info('job failed', { jobId: 'j', workerId: 'echo-1' });
    log.info('job completed', { jobId: 'j', workerId: 'remote-1' });
    log.info('worker connected', { workerId: 'echo-1' });
    log.warn('job completed', { workerId: 'echo-1' });
    expect(seen).toEqual([
      'debug job completed',
      'debug job failed',
      'info job completed',
      'info worker connected',
      'warn job completed',
    ]);
  });
});
