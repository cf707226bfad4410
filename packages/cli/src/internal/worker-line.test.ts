import { describe, expect, it } from 'vitest';
import { workerLine } from './worker-line.js';

describe('workerLine', () => {
  it("a worker's JSON log line in pretty form, without workerId and endpointId (the prefix names them)", () => {
    const line = JSON.stringify({
      level: 30,
      time: Date.UTC(2026, 10, 24, 19, 17, 54),
      pid: 7,
      hostname: 'h',
      workerId: 'echo-1',
      endpointId: 'echo',
      jobId: 'j1',
      attempt: 1,
      ms: 77,
      msg: 'job completed',
    });
    expect(workerLine(line)).toEqual({ text: '19:17:54 info  job completed jobId=j1 attempt=1 ms=77', level: 'info' });
    expect(workerLine('{"level":50,"time":0,"msg":"boom"}')).toEqual({ text: '00:00:00 error boom', level: 'error' });
  });

  it('anything else (console.log outside a job, a stack trace, JSON that is not a log line) as it is', () => {
    for (const line of ['console works too: 2 greeting(s) for Ada', '    at load (/app/model.ts:3:9)', '{"a":1}'])
      expect(workerLine(line)).toEqual({ text: line });
  });
});
