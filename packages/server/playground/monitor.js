// @ts-check
// The Monitor view: an endpoint over the last 15 minutes or hour, from GET /v2/<ep>/monitor (the server's ring
// buffer, 5 s slots; 5 min for a closer look): jobs per second, queue depth, delay and execution p50/p95, workers by state, cold starts.
// A load-balancing endpoint (`"type": "http"`, the answer's `lb`): requests per second, requests waiting for a
// worker, request time p50/p95, its workers, and now each ready worker's requests in flight.
// Refreshed every 2.5 s while the tab is visible.
import { api, route } from './api.js';
import { drawChart, formatMs, formatNumber, lastValue, ratePerSecond } from './chart.js';
import { $, el, errorText, show } from './dom.js';
import { HTTP_CHARTS, renderLb } from './monitor-lb.js';
import { gpusText, waitingText } from './waiting.js';

/** @typedef {import('./chart.js').Values} Values */

/**
 * The answer of GET /v2/<ep>/monitor: per-slot series over the window, and totals over it.
 *
 * @typedef {object} MonitorAnswer
 * @property {number} now
 * @property {number} slotMs
 * @property {number[]} t slot start times
 * @property {Values} completed
 * @property {Values} failed
 * @property {Values} queue
 * @property {Values} delayP50
 * @property {Values} delayP95
 * @property {Values} execP50
 * @property {Values} execP95
 * @property {Values} coldStarts
 * @property {Record<string, Values>} workers
 * @property {string} [waitingFor] why queued jobs wait now (while any is queued)
 * @property {{ workerId: string, devices: string[] }[]} [gpus] which worker holds which GPU now
 * @property {import('./monitor-lb.js').LbNow} [lb] a load-balancing endpoint: its requests and workers now
 * @property {{ completed: number, failed: number, coldStarts: number, delayP50: number | null,
 *   delayP95: number | null, execP50: number | null, execP95: number | null }} totals
 */

/** @type {[label: string, seconds: number][]} */
const WINDOWS = [
  ['5 min', 300],
  ['15 min', 900],
  ['1 hour', 3600],
];
const WORKERS = ['idle', 'running', 'starting', 'draining', 'unhealthy'];
/** @type {{ id: string, title: string, series: [name: string, color: string][], ms?: boolean }[]} */
const CHARTS = [
  {
    id: 'jobs',
    title: 'Jobs per second',
    series: [
      ['completed', '--c-ok'],
      ['failed', '--c-bad'],
    ],
  },
  { id: 'queue', title: 'Queue depth', series: [['queued', '--c-1']] },
  {
    id: 'delay',
    title: 'Delay (queue wait)',
    series: [
      ['p50', '--c-1'],
      ['p95', '--c-2'],
    ],
    ms: true,
  },
  {
    id: 'exec',
    title: 'Execution time',
    series: [
      ['p50', '--c-1'],
      ['p95', '--c-2'],
    ],
    ms: true,
  },
  {
    id: 'workers',
    title: 'Workers',
    series: [
      ['idle', '--c-1'],
      ['running', '--c-ok'],
      ['starting', '--c-2'],
      ['draining', '--c-3'],
      ['unhealthy', '--c-bad'],
    ],
  },
  { id: 'cold', title: 'Cold starts', series: [['cold starts', '--c-2']] },
];

/**
 * Builds the view in #monitor-charts and keeps it fresh for `endpoint()` (the picked target's endpoint).
 *
 * @param {{ endpoint: () => string | undefined }} options
 * @returns {{ refresh: () => Promise<void> }}
 */
export function mountMonitor({ endpoint }) {
  let windowS = Number(sessionStorage.getItem('berth.monitorWindow')) || 900;
  /** @type {MonitorAnswer | undefined} */
  let last; // the last answer, redrawn on resize
  let seq = 0;
  /** @type {Map<string, HTMLElement>} */
  const legends = new Map();
  /** @type {Map<string, HTMLCanvasElement>} */
  const canvases = new Map();
  /** @type {Map<string, HTMLElement>} */
  const figures = new Map();
  const buttons = WINDOWS.map(([label, s]) => {
    const b = el('button', { type: 'button', className: 'tab', textContent: label });
    b.setAttribute('aria-pressed', String(s === windowS));
    b.addEventListener('click', () => {
      windowS = s;
      sessionStorage.setItem('berth.monitorWindow', String(s));
      for (const x of buttons) x.setAttribute('aria-pressed', String(x === b));
      void refresh();
    });
    return b;
  });
  $('monitor-windows').replaceChildren(...buttons);
  $('monitor-charts').replaceChildren(
    ...CHARTS.map((c) => {
      const legend = el('p', { className: 'legend' });
      legends.set(c.id, legend);
      const canvas = el('canvas', { className: 'chart' });
      canvas.setAttribute('role', 'img');
      canvas.setAttribute('aria-label', `${c.title} over time`);
      canvases.set(c.id, canvas);
      const figure = el('figure', { className: 'chart-box' }, [el('h3', { textContent: c.title }), legend, canvas]);
      figure.dataset.chart = c.id;
      figures.set(c.id, figure);
      return figure;
    }),
  );

  /**
   * "● completed 2.4/s" items, each value in a span with data-figure for tests and screen readers.
   *
   * @param {string} id
   * @param {[name: string, value: string, color: string | undefined][]} items
   */
  const legend = (id, items) =>
    legends.get(id)?.replaceChildren(
      ...items.map(([name, value, color]) => {
        const v = el('span', { className: 'figure', textContent: value });
        v.dataset.figure = `${id}.${name}`;
        const swatch = el('span', { className: 'swatch', ariaHidden: 'true' });
        if (color) swatch.classList.add(`sw${color.replace('--c', '')}`);
        return el('span', { className: 'legend-item' }, [swatch, `${name} `, v]);
      }),
    );

  /**
   * Titles for the kind of endpoint: a load-balancing one charts requests, and has no queue delay chart.
   *
   * @param {boolean} http
   */
  function titles(http) {
    for (const c of CHARTS) {
      const f = figures.get(c.id);
      if (!f) continue;
      const h3 = f.querySelector('h3');
      if (h3) h3.textContent = (http && HTTP_CHARTS[c.id]?.title) || c.title;
      f.hidden = http && c.id === 'delay';
    }
  }

  /**
   * The series name of a chart's legend item `i`, for the kind of endpoint.
   *
   * @param {boolean} http
   * @param {string} id
   * @param {number} i
   */
  const nameOf = (http, id, i) =>
    (http && HTTP_CHARTS[id]?.names[i]) || CHARTS.find((c) => c.id === id)?.series[i]?.[0] || '';

  /** @param {MonitorAnswer} m */
  function render(m) {
    const http = m.lb !== undefined;
    titles(http);
    const from = m.now - windowS * 1000;
    const common = { t: m.t, slotMs: m.slotMs, from, now: m.now };
    const span = windowS === 3600 ? '1 h' : `${windowS / 60} min`;
    const completed = ratePerSecond(m.completed, m.t, m.slotMs, m.now);
    const failed = ratePerSecond(m.failed, m.t, m.slotMs, m.now);
    /**
     * @param {string} id
     * @param {number} i
     */
    const color = (id, i) => CHARTS.find((c) => c.id === id)?.series[i]?.[1];
    /**
     * @param {string} id
     * @param {(Values | undefined)[]} values
     * @param {{ format?: (v: number) => string, floor?: number }} [opts]
     */
    const draw = (id, values, opts = {}) =>
      drawChart(/** @type {HTMLCanvasElement} */ (canvases.get(id)), {
        ...common,
        ...opts,
        series: values.map((v, i) => ({ values: v ?? [], color: color(id, i) ?? '' })),
      });
    draw('jobs', [completed, failed], { format: formatNumber });
    legend('jobs', [
      [
        nameOf(http, 'jobs', 0),
        `${formatNumber(lastValue(completed))}/s now, ${m.totals.completed} in ${span}`,
        color('jobs', 0),
      ],
      [
        nameOf(http, 'jobs', 1),
        `${formatNumber(lastValue(failed))}/s now, ${m.totals.failed} in ${span}`,
        color('jobs', 1),
      ],
    ]);
    draw('queue', [m.queue]);
    legend('queue', [[nameOf(http, 'queue', 0), `${formatNumber(lastValue(m.queue))} now`, color('queue', 0)]]);
    /** @type {[string, Values, Values, number | null, number | null][]} */
    const timings = [
      ['delay', m.delayP50, m.delayP95, m.totals.delayP50, m.totals.delayP95],
      ['exec', m.execP50, m.execP95, m.totals.execP50, m.totals.execP95],
    ];
    for (const [id, p50, p95, t50, t95] of timings) {
      if (http && id === 'delay') continue;
      draw(id, [p50, p95], { format: formatMs, floor: 10 });
      legend(id, [
        ['p50', `${formatMs(t50)} over ${span}`, color(id, 0)],
        ['p95', `${formatMs(t95)} over ${span}`, color(id, 1)],
      ]);
    }
    draw(
      'workers',
      WORKERS.map((s) => m.workers[s]),
    );
    legend(
      'workers',
      WORKERS.map((s, i) => [s, formatNumber(lastValue(m.workers[s] ?? [])), color('workers', i)]),
    );
    draw('cold', [m.coldStarts]);
    legend('cold', [['cold starts', `${m.totals.coldStarts} in ${span}`, color('cold', 0)]]);
    // Now: why queued jobs (requests) wait, or a worker the scaler cannot start yet, and the GPUs held.
    renderLb(m.lb);
    const waiting = m.lb ? (m.lb.waiting > 0 ? 'Requests are' : 'The next worker is') : 'Queued jobs are';
    const now = [
      m.waitingFor ? `${waiting} ${waitingText(m.waitingFor)}` : '',
      m.gpus?.length ? `GPUs: ${gpusText(m.gpus)}` : '',
    ].filter(Boolean);
    show('monitor-waiting', now.length ? now.join('. ') : undefined);
    $('monitor-updated').textContent =
      `Updated ${new Date(m.now).toLocaleTimeString([], { hourCycle: 'h23' })} · ${m.slotMs / 1000} s slots · ${http ? 'requests, request time' : 'delay, execution'} and cold starts as this server saw them`;
  }

  async function refresh() {
    const ep = endpoint();
    if (!ep) return;
    const mine = ++seq;
    $('monitor-endpoint').textContent = ep;
    try {
      const m = await api(`${route(ep, 'monitor')}?window=${windowS}`);
      if (mine !== seq) return;
      last = m;
      render(m);
      show('monitor-error');
    } catch (err) {
      if (mine === seq) show('monitor-error', `Monitor: ${errorText(err)}`);
    }
  }

  setInterval(() => {
    if (!document.hidden) void refresh();
  }, 2500);
  window.addEventListener('resize', () => last && render(last));
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => last && render(last));
  return { refresh };
}
