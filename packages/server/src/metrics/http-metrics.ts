import { routeFamily } from '../http/route-family.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { CounterChild, Registry } from './registry.js';

/** Upper bounds (ms) of the HTTP latency histogram (exposed in seconds). */
const HTTP_BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000];

/**
 * HTTP request count by route family and status, and latency by route family: time from the request reaching the
 * API to its answer being ready (a `/runsync` includes the job; a stream's body is not counted). Per replica.
 */
export function httpMetrics(registry: Registry) {
  const requests = registry.counter({
    name: 'berth_http_requests_total',
    help: 'HTTP requests answered, by route family and status code.',
    labels: ['route', 'code'],
    perReplica: true,
  });
  const duration = registry.histogram(
    {
      name: 'berth_http_request_duration_seconds',
      help: 'Time from a request reaching the API to its answer being ready, by route family.',
      labels: ['route'],
      perReplica: true,
    },
    HTTP_BUCKETS_MS,
    1000,
  );
  // route -> status -> counter: a request costs two map lookups, no string built.
  const byCode = new Map<string, Map<number, CounterChild>>();
  const count = (route: string, status: number) => {
    let codes = byCode.get(route);
    if (!codes) byCode.set(route, (codes = new Map()));
    let c = codes.get(status);
    if (!c) codes.set(status, (c = requests.labels(route, String(status))));
    c.inc();
  };
  /** Wraps the socket-free API so every answer is counted and timed. */
  return (handle: (req: ApiRequest) => Promise<ApiResponse>) =>
    async (req: ApiRequest): Promise<ApiResponse> => {
      const t0 = performance.now();
      const route = routeFamily(req.path);
      let status = 500;
      try {
        const res = await handle(req);
        status = res.status;
        return res;
      } finally {
        duration.of(route).observe(performance.now() - t0);
        count(route, status);
      }
    };
}
