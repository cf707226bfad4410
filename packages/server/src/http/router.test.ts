import { describe, expect, it } from 'vitest';
import { Router } from './router.js';

function router() {
  const r = new Router<string>();
  r.add(['POST'], '/v2/:ep/run', 'run');
  r.add(['GET', 'POST'], '/v2/:ep/status/:job_id', 'status');
  r.add(['GET', 'PUT'], '/v2/:ep/batch/:id', 'batch');
  r.add(['DELETE'], '/v2/:ep/batch/:id', 'batch-delete');
  r.add(['DELETE'], '/v2/:ep/batch/:id/requests/:requestId', 'batch-request');
  r.add('*', '/v2/:ep/lb/*path', 'lb');
  r.add([], '/v2/:ep/:op', 'fallback');
  r.add([], '/v2/:ep/:op/:job_id', 'fallback-job');
  r.add(['GET', 'POST'], '/v2/_worker/jobs/*rest', 'blob');
  r.add(['GET'], '/ping', 'ping');
  r.add(['GET', 'HEAD'], '/', 'page');
  return r;
}

const pick = (r: Router<string>, method: string, path: string) => {
  const m = r.match(path);
  return m && { route: m.routes.byMethod.get(method) ?? m.routes.any ?? m.routes.first, params: m.params };
};

describe('the one matcher (router.ts)', () => {
  it('matches literal segments, parameters and several methods of one path, each its own route', () => {
    const r = router();
    expect(pick(r, 'POST', '/v2/echo/run')).toEqual({ route: 'run', params: { ep: 'echo' } });
    expect(pick(r, 'GET', '/v2/echo/status/j1')).toEqual({ route: 'status', params: { ep: 'echo', job_id: 'j1' } });
    expect(pick(r, 'PUT', '/v2/echo/batch/b1')).toEqual({ route: 'batch', params: { ep: 'echo', id: 'b1' } });
    expect(pick(r, 'DELETE', '/v2/echo/batch/b1')).toEqual({ route: 'batch-delete', params: { ep: 'echo', id: 'b1' } });
    expect(pick(r, 'DELETE', '/v2/echo/batch/b1/requests/r9')?.params).toEqual({
      ep: 'echo',
      id: 'b1',
      requestId: 'r9',
    });
    expect(r.match('/v2/echo/batch/b1')?.routes.allow).toEqual(['GET', 'PUT', 'DELETE']);
    expect(pick(r, 'GET', '/ping')?.route).toBe('ping');
    expect(pick(r, 'HEAD', '/')?.route).toBe('page');
  });

  it('a tail takes the rest of the path (one segment or more, maybe empty) and every method of a `*` route', () => {
    const r = router();
    expect(pick(r, 'PATCH', '/v2/echo/lb/v1/a/b')).toEqual({ route: 'lb', params: { ep: 'echo', path: 'v1/a/b' } });
    expect(pick(r, 'GET', '/v2/echo/lb/')).toEqual({ route: 'lb', params: { ep: 'echo', path: '' } });
    expect(r.match('/v2/echo/lb/x')?.tail).toBe('path');
    expect(pick(r, 'GET', '/v2/_worker/jobs/j1/input')?.params).toEqual({ rest: 'j1/input' });
  });

  it('backs out of a literal branch that reaches no route: the parameter, then fallbacks', () => {
    const r = router();
    // `_worker/jobs` has only a tail: without one, the path is `/v2/:ep/:op`.
    expect(pick(r, 'GET', '/v2/_worker/jobs')).toEqual({ route: 'fallback', params: { ep: '_worker', op: 'jobs' } });
    // `run` takes no job id: the fallback with one.
    expect(pick(r, 'POST', '/v2/echo/run/j1')?.route).toBe('fallback-job');
    expect(pick(r, 'GET', '/v2/echo/status')?.route).toBe('fallback');
    // An empty segment is a value (the steps refuse it with the API's own errors).
    expect(pick(r, 'POST', '/v2//run')).toEqual({ route: 'run', params: { ep: '' } });
    expect(pick(r, 'GET', '/v2/echo/status/')?.params).toEqual({ ep: 'echo', job_id: '' });
  });

  it('no route: too deep, too short, not under /, or a prototype name', () => {
    const r = router();
    expect(r.match('/v2/echo/status/j1/more')).toBeUndefined();
    expect(r.match('/v2/echo')).toBeUndefined();
    expect(r.match('/nope')).toBeUndefined();
    expect(r.match('ping')).toBeUndefined();
    expect(r.match('/constructor')).toBeUndefined();
    expect(r.match('/ping/')).toBeUndefined();
  });

  it('refuses a table it cannot serve: the same method twice, a tail not last, parameters named apart', () => {
    expect(() => router().add(['POST'], '/v2/:ep/run', 'again')).toThrow(/added twice/);
    expect(() => router().add(['GET'], '/a/*rest/b', 'x')).toThrow(/must come last/);
    expect(() => router().add(['GET'], '/v2/:endpoint/x', 'x')).toThrow(/parameter :endpoint where others have :ep/);
  });
});
