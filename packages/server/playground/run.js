// @ts-check
// Running jobs: /run (then status every 500 ms and, for streaming endpoints, the stream) or /runsync; the result
// panel (status, times, a running timer, progress bar, what a queued job waits for, cost, text, media, raw JSON)
// and the Cancel and Retry buttons. Inputs the form's schema refuses are not sent.
import { api, followStream, isAbort, messageOf, route, TERMINAL, withoutSecrets } from './api.js';
import { $, errorText, show, sleep } from './dom.js';
import { chunkText, outputText, renderMedia } from './output.js';
import { elapsedText, progressParts, waitingText } from './progress.js';
import { problemText } from './validate.js';
import { waitingText as reasonText } from './waiting.js';

/** Reasons only the scaler knows (`waitingFor`), shown as they are; the others are told from the worker counts. */
const SCALER_REASONS = ['gpu', 'image_missing', 'crash_loop', 'low_priority'];

/**
 * Where jobs run: an endpoint (or a public model's slug, `id`), the endpoint serving it, and whether it streams.
 *
 * @typedef {{ id: string, endpoint?: string, stream: boolean }} RunTarget
 */

/**
 * A job object as the API returns it (or the page's own SUBMITTING/ERROR placeholder).
 *
 * @typedef {{ id?: string, status?: string, [key: string]: any }} Job
 */

/**
 * What the runner asks the page for.
 *
 * @typedef {object} RunnerOptions
 * @property {() => RunTarget | undefined} target
 * @property {() => unknown} input the input to send; throws with a readable message when it cannot be read
 * @property {() => void} settled
 * @property {(mark: boolean) => import('./validate.js').Problem[]} [problems]
 */

/**
 * @type {{ job: Job | undefined, jobTarget: RunTarget | undefined, follow: AbortController | undefined,
 *   streamed: string, started: number, timer: ReturnType<typeof setInterval> | undefined }}
 */
const state = { job: undefined, jobTarget: undefined, follow: undefined, streamed: '', started: 0, timer: undefined };
/** @type {RunnerOptions['target']} */
let getTarget = () => undefined;
/** @type {RunnerOptions['input']} */
let getInput = () => ({});
/** @type {NonNullable<RunnerOptions['problems']>} */
let getProblems = () => [];
/** @type {RunnerOptions['settled']} */
let onSettled = () => {};

let mounted = false;

/**
 * Wires the Run, Run sync, Cancel and Retry buttons. `settled()` runs when a job changed state (to refresh the jobs
 * view and health); `problems()` lists what is wrong with the input (nothing is sent while it lists something).
 */
/** @param {RunnerOptions} options */
export function mountRunner(options) {
  ({ target: getTarget, input: getInput, settled: onSettled, problems: getProblems = () => [] } = options);
  if (mounted) return; // listeners once: a second set would submit every job twice
  mounted = true;
  $('input-form').addEventListener('submit', (e) => {
    e.preventDefault();
    void submit(false);
  });
  $('runsync').addEventListener('click', () => void submit(true));

  $('cancel').addEventListener('click', async () => {
    const { id } = state.job ?? {};
    button('cancel').disabled = true;
    try {
      showJobState(await api(route(/** @type {RunTarget} */ (state.jobTarget).id, 'cancel', id), { method: 'POST' }));
      onSettled();
    } catch (err) {
      show('run-error', `Cancel: ${errorText(err)}`);
    }
  });
  $('retry').addEventListener('click', async () => {
    const { id } = state.job ?? {};
    const target = /** @type {RunTarget} */ (state.jobTarget);
    button('retry').disabled = true;
    try {
      const job = await api(route(target.id, 'retry', id), { method: 'POST' });
      resetResult();
      showJobState({ ...job, id });
      void follow(target, /** @type {string} */ (id));
    } catch (err) {
      show('run-error', `Retry: ${errorText(err)}`);
    }
  });
}

/** @param {string} id */
const button = (id) => /** @type {HTMLButtonElement} */ ($(id));

/**
 * The Elapsed field: counts while the job is live, from submit (or from when the page picked the job up).
 *
 * @param {boolean} live
 */
function clock(live) {
  if (live && !state.timer) {
    state.started ||= performance.now();
    state.timer = setInterval(
      () => ($('job-elapsed').textContent = elapsedText(performance.now() - state.started)),
      100,
    );
  } else if (!live && state.timer) {
    clearInterval(state.timer);
    state.timer = undefined;
  }
  if (state.started) $('job-elapsed').textContent = elapsedText(performance.now() - state.started);
}

/** @param {unknown} progress */
function showProgress(progress) {
  const { percent, label } = progressParts(progress);
  const bar = /** @type {HTMLProgressElement} */ ($('job-progress-bar'));
  bar.hidden = percent === undefined;
  if (percent !== undefined) bar.value = percent;
  $('job-progress').textContent = label;
}

/** @param {Job} job */
function showJobState(job) {
  const before = state.job;
  state.job = job;
  const j = state.job;
  if (j.id && before && before.id === j.id && before.status !== j.status && before.status !== 'SUBMITTING') onSettled();
  $('job-status').textContent = j.status ?? '–';
  $('job-status').className = `badge s-${j.status}`;
  $('job-id').textContent = j.id ?? '–';
  $('job-delay').textContent = typeof j.delayTime === 'number' ? `${j.delayTime} ms` : '–';
  $('job-exec').textContent = typeof j.executionTime === 'number' ? `${j.executionTime} ms` : '–';
  $('job-worker').textContent = j.workerId ?? '–';
  showProgress(j.progress ?? (j.status === 'IN_PROGRESS' ? j.output : undefined));
  if (j.status !== 'IN_QUEUE') show('job-wait');
  $('job-cost').textContent =
    typeof j.output?.cost === 'number' && j.status === 'COMPLETED' ? String(j.output.cost) : '–';
  $('raw-json').textContent = JSON.stringify(withoutSecrets(j), null, 2);
  const live = j.status === 'IN_QUEUE' || j.status === 'IN_PROGRESS' || j.status === 'SUBMITTING';
  clock(live);
  button('cancel').disabled = !(live && j.id);
  // A job refused for its input fails the same way again: fix the input and run it instead.
  const badInput = typeof j.error === 'string' && j.error.startsWith('invalid_input');
  button('retry').disabled = !(j.id && (j.status === 'FAILED' || j.status === 'TIMED_OUT') && !badInput);
  if (j.error) show('run-error', `Job ${j.status}: ${typeof j.error === 'string' ? j.error : JSON.stringify(j.error)}`);
  if (j.status === 'COMPLETED') {
    renderMedia($('media'), j.output);
    const text = outputText(j.output);
    if (text !== undefined && !(text === '' && state.streamed)) setText(text);
  }
}

/**
 * @param {string} text
 * @param {boolean} [streaming]
 */
function setText(text, streaming = false) {
  $('text-output').setAttribute('aria-busy', String(streaming));
  $('text-output').textContent = text;
  $('text-box').hidden = text === '';
}

function resetResult() {
  state.follow?.abort();
  state.job = undefined;
  clock(false);
  state.started = 0;
  $('job-elapsed').textContent = '–';
  show('job-wait');
  state.streamed = '';
  setText('');
  show('run-error');
  $('media').replaceChildren();
}

/**
 * Shows a job picked in the jobs view in the result panel (and follows it while it runs), for Cancel and Retry.
 *
 * @param {RunTarget} target
 * @param {Job & { id: string }} job
 */
export function openJob(target, job) {
  resetResult();
  state.jobTarget = target;
  $('result-target').textContent = `of ${target.id}`;
  showJobState(job);
  if (!TERMINAL.has(job.status)) void follow(target, job.id);
}

/**
 * @param {RunTarget} target
 * @param {string} id
 */
async function follow(target, id) {
  state.follow?.abort();
  const ctl = new AbortController();
  state.follow = ctl;
  const { signal } = ctl;
  // The stream has its own controller: once the job is terminal it gets a few seconds to deliver what is left.
  const streamCtl = new AbortController();
  signal.addEventListener('abort', () => streamCtl.abort(), { once: true });
  const streaming = target.stream
    ? followStream(
        target.id,
        id,
        (chunk) => {
          const piece = chunkText(chunk);
          if (!piece || streamCtl.signal.aborted) return;
          state.streamed += piece;
          setText(state.streamed, true);
        },
        streamCtl.signal,
      ).catch((err) => {
        if (!isAbort(err)) show('run-error', `Stream: ${errorText(err)}`);
      })
    : Promise.resolve();
  /** @type {Job} */
  let job;
  try {
    for (;;) {
      job = await api(route(target.id, 'status', id), { signal });
      if (signal.aborted) return;
      showJobState(job);
      if (TERMINAL.has(job.status)) break;
      if (job.status === 'IN_QUEUE') void explainWait(target, id, signal);
      await sleep(500, signal);
      if (signal.aborted) return;
    }
  } catch (err) {
    streamCtl.abort();
    if (!isAbort(err)) show('run-error', errorText(err));
    return;
  }
  await Promise.race([streaming, sleep(3000, signal)]);
  streamCtl.abort();
  if (!signal.aborted) {
    showJobState(job);
    onSettled();
  }
}

/**
 * While the job is queued: what it waits for (a cold start, no worker yet, busy workers), from /health.
 *
 * @param {RunTarget} target
 * @param {string} id
 * @param {AbortSignal} signal
 */
async function explainWait(target, id, signal) {
  try {
    const health = await api(route(target.endpoint ?? target.id, 'health'), { signal });
    if (!signal.aborted && state.job?.id === id && state.job.status === 'IN_QUEUE')
      show(
        'job-wait',
        SCALER_REASONS.includes(health.waitingFor)
          ? `Queued: ${reasonText(health.waitingFor)}.`
          : waitingText(health.workers),
      );
  } catch {
    if (!signal.aborted && state.job?.id === id && state.job.status === 'IN_QUEUE')
      show('job-wait', waitingText(undefined));
  }
}

/** @param {boolean} sync */
async function submit(sync) {
  const target = getTarget();
  if (!target) return;
  let input;
  try {
    input = getInput();
  } catch (err) {
    return show('run-error', messageOf(err));
  }
  const problems = getProblems(true);
  if (problems.length)
    return show('run-error', `Not sent: the input does not match the schema: ${problemText(problems)}`);
  resetResult();
  state.jobTarget = target;
  $('result-target').textContent = `of ${target.id}`;
  showJobState({ status: 'SUBMITTING' });
  for (const b of [button('run'), button('runsync')]) b.disabled = true;
  try {
    if (sync) {
      const job = await api(route(target.id, 'runsync'), { method: 'POST', body: { input } });
      showJobState(job);
      if (!TERMINAL.has(job.status)) void follow(target, job.id);
      else onSettled();
    } else {
      const { id, status } = await api(route(target.id, 'run'), { method: 'POST', body: { input } });
      showJobState({ id, status });
      void follow(target, id);
    }
  } catch (err) {
    showJobState({ status: 'ERROR' });
    show('run-error', errorText(err));
  } finally {
    for (const b of [button('run'), button('runsync')]) b.disabled = false;
  }
}
