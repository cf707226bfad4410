import { silentLogger } from '@berth/protocol/log';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type BerthServer } from '../../server.js';

const KEY = 'k';
type Page = { requests: { id: string; status: string; createdAt: string }[]; nextCursor: string | null };

/** `GET /v2/<ep>/requests` on a real server: pages, the status filter, bad input, RunPod's 10 per 10 s. */
describe('GET /v2/<ep>/requests', () => {
  let server: BerthServer;
  let url = '';
  beforeEach(async () => {
    server = createServer({ apiKeys: [KEY], endpoints: ['echo'], logger: silentLogger });
    url = (await server.listen({ port: 0 })).url;
  });
  afterEach(() => server.close({ drainMs: 50 }));

  const auth = { authorization: `Bearer ${KEY}` };
  const get = (query: string) => fetch(`${url}/v2/echo/requests${query}`, { headers: auth });
  const run = async () =>
    (
      (await (await fetch(`${url}/v2/echo/run`, { method: 'POST', headers: auth, body: '{"input":{}}' })).json()) as {
        id: string;
      }
    ).id;

  it('pages through every request once, newest first, and filters by state', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await run());
    await fetch(`${url}/v2/echo/cancel/${ids[1]}`, { method: 'POST', headers: auth });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as Page;
      expect(page.requests.length).toBeLessThanOrEqual(2);
      seen.push(...page.requests.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual([...ids].reverse());
    const cancelled = (await (await get('?status=cancelled')).json()) as Page;
    expect(cancelled.requests).toMatchObject([{ id: ids[1], status: 'CANCELLED' }]);
    expect(Date.parse(cancelled.requests[0]!.createdAt)).toBeGreaterThan(0);
    expect(cancelled.nextCursor).toBeNull();
    const queued = (await (await get('?status=IN_QUEUE,COMPLETED&limit=10')).json()) as Page;
    expect(queued.requests.map((r) => r.id)).toEqual([ids[4], ids[3], ids[2], ids[0]]);
  });

  it('refuses an unknown state, a bad cursor and a bad limit with 400', async () => {
    const bad = async (q: string) => {
      const res = await get(q);
      return [res.status, ((await res.json()) as { code: string }).code];
    };
    expect(await bad('?status=DONE')).toEqual([400, 'invalid_request']);
    expect(await bad('?cursor=bm9wZQ')).toEqual([400, 'invalid_request']);
    expect(await bad('?limit=0')).toEqual([400, 'invalid_limit']);
    expect((await fetch(`${url}/v2/echo/requests`, { method: 'POST', headers: auth })).status).toBe(405);
  });

  it('allows 10 requests per 10 s, as RunPod does, then 429 with Retry-After', async () => {
    // Fixed 10 s windows: the run may straddle a boundary, so up to 20 pass before the first 429.
    let ok = 0;
    let res = await get('');
    while (res.status === 200 && ok < 21) {
      ok++;
      res = await get('');
    }
    expect(ok).toBeGreaterThanOrEqual(10);
    expect(ok).toBeLessThanOrEqual(20);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toMatchObject({ code: 'rate_limited', details: { operation: 'requests', limit: 10 } });
  });
});
