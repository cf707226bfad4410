// @ts-check
// How a job's progress reads: a percentage for the bar (from `percent`, or `step` of `of`/`total`/`steps`) and a
// short label from the other fields, instead of the raw JSON.

const STEP_TOTALS = ['of', 'total', 'steps', 'totalSteps'];

/**
 * `{percent?: number (0-100), label: string}` for a progress value (object, string or number).
 *
 * @param {any} progress a job's `progress` as the API returns it
 * @returns {{ percent?: number | undefined, label: string }}
 */
export function progressParts(progress) {
  if (progress === undefined || progress === null) return { label: '–' };
  if (typeof progress === 'number')
    return progress >= 0 && progress <= 100
      ? { percent: progress, label: `${Math.round(progress)}%` }
      : { label: String(progress) };
  if (typeof progress !== 'object') return { label: String(progress) };
  /** @type {number | undefined} */
  let percent;
  if (typeof progress.percent === 'number') percent = progress.percent;
  else if (typeof progress.progress === 'number' && progress.progress <= 1) percent = progress.progress * 100;
  const total = STEP_TOTALS.map((k) => progress[k]).find((v) => typeof v === 'number' && v > 0);
  if (percent === undefined && typeof progress.step === 'number' && total) percent = (progress.step / total) * 100;
  if (percent !== undefined) percent = Math.max(0, Math.min(100, percent));
  /** @type {string[]} */
  const parts = [];
  const stage = progress.stage ?? progress.status ?? progress.message;
  if (typeof stage === 'string') parts.push(stage);
  if (typeof progress.step === 'number' || typeof progress.step === 'string')
    parts.push(total ? `step ${progress.step} of ${total}` : `step ${progress.step}`);
  const shown = new Set(['percent', 'progress', 'stage', 'status', 'message', 'step', ...STEP_TOTALS]);
  for (const [k, v] of Object.entries(progress)) {
    if (shown.has(k) || v === null || typeof v === 'object') continue;
    parts.push(`${k} ${v}`);
  }
  if (percent !== undefined) parts.push(`${Math.round(percent)}%`);
  return { percent, label: parts.join(' · ') || JSON.stringify(progress) };
}

/**
 * "4.2 s", "1 min 5 s"
 *
 * @param {number} ms
 */
export function elapsedText(ms) {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/**
 * What an IN_QUEUE job is waiting for, from the endpoint's health (`workers`).
 *
 * @param {Partial<Record<string, number>> | undefined} workers worker counts by state
 */
export function waitingText(workers) {
  if (!workers) return 'Waiting for a worker.';
  const { idle = 0, running = 0, initializing = 0, ready = 0, throttled = 0, unhealthy = 0 } = workers;
  if (unhealthy > 0 && idle + running + ready + throttled + initializing === 0) {
    return 'No worker can take it: the handler failed to load, or a worker stopped answering (the server log says why); the job waits until that is fixed.';
  }
  if (initializing > 0)
    return `Cold start: ${initializing === 1 ? 'a worker is' : `${initializing} workers are`} starting (loading the handler or model).`;
  if (idle + running + ready + throttled === 0)
    return 'Waiting for a worker: none is connected yet (a cold start when the endpoint scales from zero).';
  return `Waiting for a free worker: ${running + throttled} busy.`;
}
