// The jobs view: recent jobs of an endpoint (GET /v2/<ep>/jobs), one job's object and logs (GET /v2/<ep>/logs/<id>),
// and the endpoint's health (GET /v2/<ep>/health).
import { api, route, withoutSecrets } from './api.js';

const el = (tag, props = {}, children = []) => {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
};
const ms = (v) => (typeof v === 'number' ? `${v} ms` : '–');
const time = (iso) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '–' : d.toLocaleTimeString();
};

/** Fills `tbody` with a row per job; `onPick(job)` when a job's button is pressed. */
export async function loadJobs(endpoint, tbody, onPick, signal) {
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

/** Shows one job's object and its logs in `box`; its "Open in Result" button calls `onOpen(job)`. */
export async function showJob(endpoint, id, box, onOpen, signal) {
  const [job, logs] = await Promise.all([
    api(route(endpoint, 'status', id), { signal }).catch((err) => ({ error: err.text ?? err.message })),
    api(route(endpoint, 'logs', id), { signal }).catch((err) => ({ failed: err.text ?? err.message })),
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
  box.replaceChildren(
    el('div', { className: 'jobs-head' }, [el('h3', { textContent: `Job ${id}` }), open]),
    el('pre', { className: 'json mono', textContent: JSON.stringify(withoutSecrets(job), null, 2) }),
    el('h3', { textContent: 'Logs' }),
    list,
  );
}

/** "idle 1 · running 0 · ..." for workers and jobs of a health answer. */
export async function loadHealth(endpoint, box, signal) {
  const h = await api(route(endpoint, 'health'), { signal });
  const part = (title, obj) =>
    el('div', { className: 'health-part' }, [
      el('strong', { textContent: `${title}: ` }),
      Object.entries(obj ?? {})
        .map(([k, v]) => `${k} ${v}`)
        .join(' · '),
    ]);
  box.replaceChildren(part('Workers', h.workers), part('Jobs', h.jobs));
  return h;
}
