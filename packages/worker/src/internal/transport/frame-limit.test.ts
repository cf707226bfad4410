import { LIMITS } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { frameText } from './frame-limit.js';

describe('frameText', () => {
  it('sends what fits; a result over the frame limit becomes job.fail naming its size', () => {
    const small = { type: 'job.complete' as const, id: 'j', attempt: 2, output: 'x'.repeat(100) };
    expect(frameText(small, 1000)).toBe(JSON.stringify(small));
    const big = { ...small, output: 'é'.repeat(400) }; // 800 bytes of UTF-8 in 400 characters
    const failed = JSON.parse(frameText(big, 600)) as Record<string, unknown>;
    expect(failed).toMatchObject({ type: 'job.fail', id: 'j', attempt: 2 });
    expect(failed['error']).toMatch(/^output too large: \d+ bytes of JSON, over the worker frame limit of 600 bytes/);
    const chunks = JSON.parse(
      frameText({ type: 'job.stream', id: 'j', attempt: 2, seq: 0, chunks: ['y'.repeat(700)] }, 600),
    ) as Record<string, unknown>;
    expect(chunks['error']).toMatch(/^stream chunk batch too large/);
    expect(frameText({ type: 'ping', t: 1 }, 5)).toBe('{"type":"ping","t":1}'); // only job reports are replaced
    expect(LIMITS.workerFrameBytes).toBe(24 * 1024 * 1024);
  });
});
