import { describe, expect, it } from 'vitest';
import { call, testServer } from '../testing.test-helpers.js';

const MODELS = { 'tiny-draw': { endpoint: 'echo', kind: 'image' as const, description: 'test model' } };
const NO_KEY = { authorization: '' };
const BAD_KEY = { authorization: 'Bearer nope' };
const JOB = '00000000-0000-4000-8000-000000000000-u1';

/**
 * The order of checks (steps.ts) where two checks could both answer: the first in the list wins. Each row was
 * answered the same before the route table (main 38b611d's api.ts).
 */
const ROWS: readonly [string, string, Record<string, string> | undefined, number, string | undefined][] = [
  // route shape (404) before the key; the key (401) before the endpoint, the endpoint before the operation.
  ['GET', '/nope', NO_KEY, 404, 'route_not_found'],
  ['GET', `/v2/echo/status/${JOB}/more`, NO_KEY, 404, 'route_not_found'],
  ['GET', '/v2/echo/nope', NO_KEY, 401, 'unauthorized'],
  ['GET', '/v2/nope/nope', undefined, 404, 'endpoint_not_found'],
  ['GET', '/v2/echo/nope', undefined, 404, 'route_not_found'],
  ['POST', '/v2//run', NO_KEY, 401, 'unauthorized'],
  ['POST', '/v2//run', undefined, 404, 'endpoint_not_found'],
  ['GET', '/v2/echo/status/', undefined, 404, 'route_not_found'],
  ['POST', `/v2/echo/run/${JOB}`, undefined, 404, 'route_not_found'],
  ['POST', '/v2/echo/estimate', undefined, 404, 'route_not_found'],
  // `/v2/_worker/jobs` without a tail is no worker route: an endpoint route of endpoint `_worker`.
  ['GET', '/v2/_worker/jobs', undefined, 404, 'endpoint_not_found'],
  // the method (405) after the key and endpoint on endpoint routes, before the key on the global routes.
  ['GET', '/v2/echo/run', NO_KEY, 401, 'unauthorized'],
  ['GET', '/v2/echo/run', undefined, 405, 'method_not_allowed'],
  ['POST', '/metrics', NO_KEY, 405, 'method_not_allowed'],
  ['GET', '/metrics', BAD_KEY, 401, 'unauthorized'],
  ['DELETE', '/v2/_berth/catalog', NO_KEY, 405, 'method_not_allowed'],
  // the OpenAI routes: their own 404 after the key, errors in the OpenAI shape (no `code` at the top).
  ['GET', '/v2/echo/openai/v1/nope', undefined, 404, undefined],
  ['GET', '/v2/echo/openai/v1/nope', NO_KEY, 401, undefined],
  ['GET', '/v2/echo/openai', undefined, 404, 'route_not_found'],
  // routes that check their own: /ping any method, the playground 404 on other methods, worker routes' 401.
  ['POST', '/ping', NO_KEY, 200, undefined],
  ['POST', '/', NO_KEY, 404, 'route_not_found'],
  ['GET', '/v2/echo/job-take/w1', NO_KEY, 401, 'unauthorized'],
  ['GET', '/v2/echo/ping', NO_KEY, 404, 'route_not_found'],
  ['PUT', `/v2/_worker/files/${JOB}`, NO_KEY, 401, 'unauthorized'],
  ['DELETE', `/v2/_worker/files/${JOB}`, NO_KEY, 405, 'method_not_allowed'],
  ['GET', `/v2/_worker/jobs/${JOB}/nope`, NO_KEY, 404, 'route_not_found'],
  ['GET', '/files/x.png', NO_KEY, 403, 'file_signature_invalid'],
];

describe('the order of checks (steps.ts)', () => {
  it('answers the first problem in the list, as before the route table', async () => {
    const s = testServer({ models: MODELS });
    try {
      const got = [];
      for (const [method, path, headers] of ROWS) {
        const r = await call(s, method, path, headers ? { headers } : {});
        got.push([method, path, headers, r.status, r.body?.code]);
      }
      expect(got).toEqual(ROWS);
    } finally {
      await s.close({ drainMs: 0 });
    }
  });

  it('while draining: worker routes, files and /ping are still answered; anything else is 503', async () => {
    const s = testServer();
    await s.close({ drainMs: 0 });
    expect((await call(s, 'GET', '/ping', { headers: NO_KEY })).status).toBe(200);
    expect((await call(s, 'GET', '/v2/echo/job-take/w1', { headers: NO_KEY })).body.code).toBe('unauthorized');
    expect((await call(s, 'GET', '/files/x.png', { headers: NO_KEY })).body.code).toBe('file_signature_invalid');
    expect((await call(s, 'GET', '/v2/echo/health')).body.code).toBe('unavailable');
    expect((await call(s, 'GET', '/nope')).body.code).toBe('unavailable');
    expect((await call(s, 'GET', '/')).body.code).toBe('unavailable');
  });
});
