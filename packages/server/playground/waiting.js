// @ts-check
// Why a queued job waits (`waitingFor` of /status, /health and the Monitor answer; docs/api.md, "Why a job waits"),
// in words, and where a queued job stands (`queuePosition`).

/** @type {Record<string, string>} */
const REASONS = {
  no_worker: 'no worker connected',
  workers_busy: 'all workers busy',
  cold_start: 'a worker starting (cold start)',
  image_missing: 'the worker image, missing from the Docker daemon',
  crash_loop: 'workers that crash at start (crash loop)',
  gpu: 'a GPU (all held by other workers)',
  low_priority: 'a worker (low priority: none is started for it)',
  workers_unhealthy: 'a healthy worker (workers failed their fitness checks)',
  handler_broken: 'a handler that loads (it fails to)',
  batch_lane: 'the batch lane (workers that run batch requests only)',
  batch_draft: 'its batch to be finalized (a DRAFT batch runs nothing)',
  worker: 'a ready worker with room (all busy, starting or unhealthy)',
};

/**
 * "waiting for a GPU (all held by other workers)" for a `waitingFor` reason; a reason this page does not know is
 * shown as it is.
 *
 * @param {string} reason
 */
export function waitingText(reason) {
  return `waiting for ${REASONS[reason] ?? reason}`;
}

/**
 * "next in line" / "3 jobs ahead" / "1000 or more jobs ahead" for a `queuePosition` (capped at 1000).
 *
 * @param {number} position
 */
export function positionText(position) {
  if (position === 0) return 'next in line';
  return `${position}${position >= 1000 ? ' or more' : ''} job${position === 1 ? '' : 's'} ahead`;
}

/**
 * "hog-1: 0, 1 · hog-2: 2" for `/health`'s `gpus`.
 *
 * @param {{ workerId: string, devices: string[] }[]} gpus
 */
export function gpusText(gpus) {
  return gpus.map((g) => `${g.workerId}: ${g.devices.join(', ')}`).join(' · ');
}
