import { routeNotFound } from './answer-error.js';
import type { Method, OwnRoute } from './route-types.js';

/**
 * The routes workers call, a section of the route table (`route-table.ts`): RunPod's pull protocol, output file
 * uploads and big inputs and outputs. Each checks the worker token (and the method) itself, in the worker
 * protocol's order, and is still answered while the server drains: jobs finishing during a graceful shutdown
 * still report and upload their results.
 */

/**
 * RunPod's worker protocol: `/v2/<ep>/<op>/<worker_id>[/<job_id>]`, each op with its method (`../pull/`). A path
 * of another shape under an op (no worker, one segment too many or too few) still reaches the pull routes, which
 * answer it 404 after their re-poll limiter, as they always have.
 */
const pullRoutes = (
  [
    ['job-take', 'GET', false],
    ['job-take-batch', 'GET', false],
    ['job-stop', 'GET', false],
    ['ping', 'GET', false],
    ['job-done', 'POST', true],
    ['job-stream', 'POST', true],
  ] as const
).flatMap(([op, method, job]): OwnRoute[] => {
  const route = (path: string, wellFormed: boolean): OwnRoute => ({
    kind: 'own',
    auth: 'worker',
    path,
    methods: [method],
    // Jobs finishing during a graceful shutdown still report their results.
    whileDraining: true,
    when: (d) => d.pull !== undefined,
    serve: (req, p, d) =>
      d.pull!(req, { op, method, endpointId: p['ep']!, workerId: p['worker_id'], jobId: p['job_id'], wellFormed }),
  });
  const worker = `/v2/:ep/${op}/:worker_id`;
  return job
    ? [
        route(`${worker}/:job_id`, true),
        route(`/v2/:ep/${op}`, false),
        route(worker, false),
        route(`${worker}/:job_id/*rest`, false),
      ]
    : [route(worker, true), route(`/v2/:ep/${op}`, false), route(`${worker}/*rest`, false)];
});

/** A worker's big input or output (`../blobs/blob-routes.ts`); its own method check (405) comes first. */
function blobRoute(what: 'input' | 'output', methods: readonly Method[]): OwnRoute {
  return {
    kind: 'own',
    auth: 'worker',
    path: `/v2/_worker/jobs/:job_id/${what}`,
    methods,
    whileDraining: true,
    when: (d) => d.blobRoutes !== undefined,
    serve: (req, p, d) => {
      const jobId = decodeURIComponent(p['job_id']!);
      return jobId === '' ? Promise.reject(routeNotFound(req, '', 200)) : d.blobRoutes![what](req, jobId);
    },
  };
}

export const WORKER_ROUTES: readonly OwnRoute[] = [
  {
    kind: 'own',
    auth: 'worker',
    path: '/v2/_worker/files/*job_id',
    methods: ['PUT', 'POST'],
    whileDraining: true,
    when: (d) => d.files !== undefined,
    serve: (req, p, d) => d.files!.upload(req, p['job_id']!),
  },
  blobRoute('input', ['GET']),
  blobRoute('output', ['POST']),
  {
    kind: 'own',
    auth: 'worker',
    path: '/v2/_worker/jobs/*rest',
    methods: [],
    whileDraining: true,
    when: (d) => d.blobRoutes !== undefined,
    serve: (req) => Promise.reject(routeNotFound(req, '', 200)),
  },
  ...pullRoutes,
];
