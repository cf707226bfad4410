import { describe, expect, it } from 'vitest';
import { ENDPOINT_ID_RE, JOB_ID_RE, LIMITS } from './limits.js';

describe('LIMITS', () => {
  it('match the API contract', () => {
    expect(LIMITS).toMatchObject({
      runBodyBytes: 10 * 1024 * 1024,
      runsyncBodyBytes: 20 * 1024 * 1024,
      waitMin: 1_000,
      waitMax: 300_000,
      waitDefault: 90_000,
      executionTimeoutDefault: 10 * 60_000,
      ttlDefault: 24 * 3600_000,
      retentionAsync: 30 * 60_000,
      retentionSync: 60_000,
    });
    expect(LIMITS.executionTimeoutMin).toBeLessThanOrEqual(LIMITS.executionTimeoutDefault);
    expect(LIMITS.ttlMin).toBeLessThanOrEqual(LIMITS.ttlDefault);
  });
});

describe('id patterns', () => {
  it.each(['a', '0', 'my-endpoint', 'sdxl-turbo', `a${'b'.repeat(62)}`])('accepts endpoint id %s', (id) => {
    expect(ENDPOINT_ID_RE.test(id)).toBe(true);
  });

  it.each(['', '-a', 'A', 'my_endpoint', 'a/b', 'a.b', `a${'b'.repeat(63)}`, 'a\n'])('refuses endpoint id %j', (id) => {
    expect(ENDPOINT_ID_RE.test(id)).toBe(false);
  });

  const uuid = '3f2b8c1e-9d4a-4b7c-8e2f-1a2b3c4d5e6f';
  it.each([`${uuid}-u1`, `sync-${uuid}-u1`, `${uuid}-u12`])('accepts job id %s', (id) => {
    expect(JOB_ID_RE.test(id)).toBe(true);
  });

  it.each([
    uuid,
    `${uuid}-u`,
    `async-${uuid}-u1`,
    `${uuid.toUpperCase()}-u1`,
    `${uuid.replace('-4b7c', '-1b7c')}-u1`,
    `${uuid}-u1\n`,
  ])('refuses job id %s', (id) => {
    expect(JOB_ID_RE.test(id)).toBe(false);
  });
});
