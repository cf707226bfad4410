import { readFileSync } from 'node:fs';
import { LIMITS } from '@berth/protocol';
import { describe, expect, it } from 'vitest';
import { API_KEY, testServer } from '../testing.test-helpers.js';
import { openApiDocument } from './openapi/document.js';
import { ROUTES } from './route-table.js';

const MODELS = { 'tiny-draw': { endpoint: 'echo', kind: 'image' as const, description: 'test model' } };
const doc = openApiDocument({
  targets: [
    { id: 'echo', kind: 'endpoint' },
    { id: 'tiny-draw', kind: 'model' },
  ],
  readOnly: false,
  routes: ROUTES,
}) as { paths: Record<string, Record<string, any>> };

/** Routes the API core (`handle`) does not answer: the playground page and API reference, files, /ping. */
const SERVED_ELSEWHERE = ['/', '/docs', '/files/{name}', '/ping'];
const JOB = '00000000-0000-4000-8000-000000000000-u1';

async function send(server: ReturnType<typeof testServer>, method: string, path: string) {
  const url = new URL(path.replace('{job_id}', JOB), 'http://x');
  const res = await server.handle({
    method,
    path: url.pathname,
    query: url.searchParams,
    headers: { authorization: `Bearer ${API_KEY}`, 'content-length': '1' },
    // A client already gone: a route that waits for a worker (GET openai/v1/models) gives up at once.
    signal: AbortSignal.abort(),
    // Not JSON: a route that reads a body answers 400 invalid_json, so nothing is queued or waited for.
    ...(method === 'POST'
      ? {
          body: (async function* () {
            yield Buffer.from('x');
          })(),
        }
      : {}),
  });
  const body = 'json' in res ? (res.json as { code?: string } | null) : null;
  return { status: res.status, code: body?.code, allow: res.headers?.['allow'] };
}

describe('the route table: dispatch and the OpenAPI document come from it', () => {
  it('every documented path and method is dispatched (no 404 route_not_found, no 405); every other method is a 405 naming the documented ones', async () => {
    const server = testServer({ models: MODELS });
    try {
      const paths = Object.entries(doc.paths).filter(([p]) => !SERVED_ELSEWHERE.includes(p));
      expect(paths.length).toBeGreaterThan(20);
      for (const [path, ops] of paths) {
        const documented = Object.keys(ops).map((m) => m.toUpperCase());
        for (const method of ['GET', 'POST', 'PUT', 'DELETE']) {
          const r = await send(server, method, path);
          if (documented.includes(method)) {
            expect([path, method, r.code]).not.toEqual([path, method, 'route_not_found']);
            expect([path, method, r.status]).not.toEqual([path, method, 405]);
          } else {
            expect([path, method, r.status, r.allow]).toEqual([path, method, 405, documented.join(', ')]);
          }
        }
      }
    } finally {
      await server.close({ drainMs: 0 });
    }
  });

  it("query defaults and bounds are the ones the routes apply (LIMITS), e.g. /stream's wait defaults to 5000", async () => {
    const wait = (path: string, method = 'post') =>
      doc.paths[path]![method].parameters.find((p: { name: string }) => p.name === 'wait').schema;
    expect(wait('/v2/echo/stream/{job_id}')).toEqual({
      type: 'integer',
      minimum: 0,
      maximum: LIMITS.waitMax,
      default: LIMITS.streamWaitDefault,
    });
    expect(LIMITS.streamWaitDefault).toBe(5000);
    expect(wait('/v2/echo/runsync')).toMatchObject({ minimum: LIMITS.waitMin, default: LIMITS.waitDefault });
    expect(wait('/v2/echo/status-sync/{job_id}', 'get')).toMatchObject({ default: LIMITS.waitDefault });
    // The route applies the same bounds: one below the documented minimum is refused.
    const server = testServer();
    try {
      expect(await send(server, 'GET', `/v2/echo/stream/{job_id}?wait=${LIMITS.waitMax + 1}`)).toMatchObject({
        status: 400,
        code: 'invalid_wait',
      });
      expect(await send(server, 'GET', `/v2/echo/status-sync/{job_id}?wait=${LIMITS.waitMin - 1}`)).toMatchObject({
        status: 400,
        code: 'invalid_wait',
      });
    } finally {
      await server.close({ drainMs: 0 });
    }
  });

  it("docs/api.md gives /stream's wait default as the route applies it", () => {
    const md = readFileSync(new URL('../../../../docs/api.md', import.meta.url), 'utf8');
    const streaming = md.slice(md.indexOf('## Streaming'));
    expect(/`\?wait=` ms \(default (\d+)/.exec(streaming)?.[1]).toBe(String(LIMITS.streamWaitDefault));
  });

  it('docs/rate-limits.md names every route under the operation it is counted as', () => {
    const md = readFileSync(new URL('../../../../docs/rate-limits.md', import.meta.url), 'utf8');
    const rows = new Map(
      md
        .split('\n')
        .filter((l) => /^\| `[a-z-]+` \|/.test(l))
        .map((l) => {
          const [, op, routes] = l.split('|').map((c) => c.trim());
          return [op!.replaceAll('`', ''), routes!] as const;
        }),
    );
    for (const route of ROUTES) {
      if (route.kind !== 'endpoint' || !route.doc || route.operation === 'openai') continue;
      const name = route.path.split('/')[3]!;
      expect([name, rows.get(route.operation)]).toEqual([name, expect.stringContaining(`\`/${name}`)]);
    }
  });
});
