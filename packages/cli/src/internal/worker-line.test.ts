import { describe, expect, it } from 'vitest';
import { workerLine } from './worker-line.js';

describe('workerLine', () => {
  it("a worker's log line in the control plane's time format, without the worker= field the prefix gives", () => {
    expect(workerLine('info  2026-11-24T19:17:54.359Z worker=echo-1 job=j1 job completed {"ms":77}')).toBe(
      '19:17:54 info  job=j1 job completed {"ms":77}',
    );
    expect(workerLine('error 2026-11-24T19:17:54.359Z worker=echo-1 boom')).toBe('19:17:54 error boom');
  });

  it('anything else (console.log from a handler, a stack trace) as it is', () => {
    for (const line of [
      'console works too: 2 greeting(s) for Ada',
      '    at load (/app/model.ts:3:9)',
      'info 2026 worker=x',
    ])
      expect(workerLine(line)).toBe(line);
  });
});
