// @ts-check
// The jobs view: recent jobs of an endpoint (GET /v2/<ep>/jobs), one job's object and logs (GET /v2/<ep>/logs/<id>),
// and the endpoint's health (GET /v2/<ep>/health), with why queued jobs wait and which worker holds which GPU.
import { api, messageOf, route, withoutSecrets } from './api.js';
import { el } from './dom.js';
import { gpusText, positionText, waitingText } from './waiting.js';

/** @param {unknown} v */
const ms = (v) => (typeof v === 'number' ? `${v} ms` : '–');
/** @param {string} iso */
const time = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '–' : d.toLocaleTimeString();
};

/**
 * A job as GET /v2/<ep>/jobs lists it.
 *
 * @typedef {{ id: string, status: string, createdAt: string, delayTime?: number, executionTime?: number,
 *   workerId?: string, retries?: number }} JobRow
 */

/**
 * Fills `tbody` with a row per job; `onPick(job)` when a job's button is pressed.
 *
 * @param {string} endpoint
 * @param {HTMLElement} tbody
 * @param {(job: JobRow) => void} onPick
 * @param {AbortSignal} [signal]
 * @returns {Promise<JobRow[]>}
 */
export async function loadJobs(endpoint, tbody, onPick, signal) {
  /** @type {{ jobs: JobRow[] }} */
  const { jobs } = await api(`${route(endpoint, 'jobs')}?limit=50`, { signal });
  tbody.replaceChildren(
    ...jobs.map((job) => {
      const short = job.id.length > 18 ? `${job.id.slice(0, 8)}…${job.id.slice(-6)}` : job.id;
      const pick = el('button', { type: 'button', className: 'link mono', textContent: short, title: job.id });
      pick.dataset.jobId = job.id;
      pick.setAttribute('aria-label', `Show job ${job.id}`);
      pick.addEventListener('click', () => onPick(job));
      const status = el('span', { className: `badge s-${job.status}`, textContent: job.status });
      return el('tr', {}, [
        el('td', {}, [pick]),
        el('td', {}, [status]),
        el('td', { textContent: time(job.createdAt) }),
        el('td', { textContent: ms(job.delayTime) }),
        el('td', { textContent: ms(job.executionTime) }),
        el('td', { textContent: job.workerId ?? '–' }),
        el('td', { textContent: String(job.retries ?? 0) }),
      ]);
    }),
  );
  if (jobs.length === 0)
    tbody.append(el('tr', {}, [el('td', { colSpan: 7, className: 'muted', textContent: 'No jobs yet.' })]));
  return jobs;
}

/**
 * Shows one job's object and its logs in `box`; its "Open in Result" button calls `onOpen(job)`.
 *
 * @param {string} endpoint
 * @param {string} id
 * @param {HTMLElement} box
 * @param {(job: any) => void} onOpen
 * @param {AbortSignal} [signal]
 */
export async function showJob(endpoint, id, box, onOpen, signal) {
  const options = { signal };
  /** @param {unknown} err */
  const text = (err) => /** @type {{ text?: string }} */ (err).text ?? messageOf(err);
  const [job, logs] = await Promise.all([
    api(route(endpoint, 'status', id), options).catch((err) => ({ error: text(err) })),
    api(route(endpoint, 'logs', id), options).catch((err) => ({ failed: text(err) })),
  ]);
  const list = el('ol', { className: 'logs mono' });
  if (logs.failed) list.append(el('li', { className: 'error', textContent: `Could not read logs: ${logs.failed}` }));
  else if (!logs.logs?.length) list.append(el('li', { className: 'muted', textContent: 'No log lines for this job.' }));
  else
    for (const line of logs.logs) {
      const fields = line.fields && Object.keys(line.fields).length ? ` ${JSON.stringify(line.fields)}` : '';
      list.append(
        el('li', { className: `log-${line.level}` }, [
          el('span', { className: 'muted', textContent: `${time(line.time)} ` }),
          el('span', { className: 'level', textContent: `${String(line.level).toUpperCase()} ` }),
          el('span', { className: 'muted', textContent: `[${line.workerId ?? '?'}#${line.attempt ?? '?'}] ` }),
          `${line.message}${fields}`,
        ]),
      );
    }
  const open = el('button', { type: 'button', className: 'secondary', textContent: 'Open in Result' });
  open.disabled = !job.id;
  open.addEventListener('click', () => onOpen(job));
  // A queued job: where it stands and why it waits (Berth fields of /status).
  const queued =
    job.status === 'IN_QUEUE'
      ? [
          el('p', {
            className: 'queued',
            textContent: [
              'Queued',
              typeof job.queuePosition === 'number' ? positionText(job.queuePosition) : undefined,
              job.waitingFor ? waitingText(job.waitingFor) : undefined,
            ]
              .filter(Boolean)
              .join(' · '),
          }),
        ]
      : [];
  box.replaceChildren(
    el('div', { className: 'jobs-head' }, [el('h3', { textContent: `Job ${id}` }), open]),
    ...queued,
    el('pre', { className: 'json mono', textContent: JSON.stringify(withoutSecrets(job), null, 2) }),
    el('h3', { textContent: 'Logs' }),
    list,
  );
}

/**
 * "idle 1 · running 0 · ..." for workers and jobs of a health answer.
 *
 * @param {string} endpoint
 * @param {HTMLElement} box
 * @param {AbortSignal} [signal]
 * @returns {Promise<any>} the health answer
 */
export async function loadHealth(endpoint, box, signal) {
  const h = await api(route(endpoint, 'health'), { signal });
  /**
   * @param {string} title
   * @param {Record<string, unknown> | undefined} obj
   */
  const part = (title, obj) =>
    el('div', { className: 'health-part' }, [
      el('strong', { textContent: `${title}: ` }),
      Object.entries(obj ?? {})
        .map(([k, v]) => `${k} ${v}`)
        .join(' · '),
    ]);
  /**
   * @param {string} title
   * @param {string} text
   */
  const line = (title, text) =>
    el('div', { className: 'health-part' }, [el('strong', { textContent: `${title}: ` }), text]);
  box.replaceChildren(
    part('Workers', h.workers),
    part('Jobs', h.jobs),
    ...(h.waitingFor ? [line('Queued jobs', waitingText(h.waitingFor))] : []),
    ...(h.gpus?.length ? [line('GPUs', gpusText(h.gpus))] : []),
  );
  return h;
}
