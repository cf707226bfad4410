/** The per-endpoint operations counted as their own route family (anything else under `/v2/<ep>/` is `other`). */
const OPERATIONS = new Set([
  'run',
  'runsync',
  'status',
  'status-sync',
  'stream',
  'cancel',
  'retry',
  'purge-queue',
  'health',
  'webhooks',
  'logs',
  'jobs',
  'monitor',
  'estimate',
  'openai',
  'lb',
]);
/** RunPod's worker protocol: held polls apart from reports (a poll is held up to `pullHoldMs` on purpose). */
const PULL_POLLS = new Set(['job-take', 'job-take-batch', 'job-stop']);
const PULL_REPORTS = new Set(['job-done', 'job-stream', 'ping']);

/**
 * The route family of a request path, the `route` label of the HTTP metrics: the operation (`run`, `status`, ...),
 * never the raw path, so the label has a few dozen values whatever clients send.
 */
export function routeFamily(path: string): string {
  if (path.startsWith('/v2/')) {
    const epEnd = path.indexOf('/', 4);
    if (epEnd < 0) return 'other';
    const opEnd = path.indexOf('/', epEnd + 1);
    const op = path.slice(epEnd + 1, opEnd < 0 ? undefined : opEnd);
    const ep = path.slice(4, epEnd);
    if (ep === '_berth') return op === 'catalog' ? 'catalog' : 'other';
    if (ep === '_worker') return op === 'files' ? 'file-upload' : 'other';
    if (OPERATIONS.has(op)) return op;
    if (PULL_POLLS.has(op)) return 'pull-poll';
    if (PULL_REPORTS.has(op)) return 'pull-report';
    return 'other';
  }
  if (path === '/ping') return 'ping';
  if (path === '/metrics') return 'metrics';
  if (path === '/openapi.json') return 'openapi';
  if (path === '/' || path === '/docs' || path.startsWith('/playground/')) return 'playground';
  if (path.startsWith('/files/')) return 'files';
  return 'other';
}
