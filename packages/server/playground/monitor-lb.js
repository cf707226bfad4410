// @ts-check
// The Monitor view of a load-balancing endpoint (`"type": "http"`, the monitor answer's `lb`): its charts' titles
// and the "Now:" line of its workers and requests in flight.
import { $, el } from './dom.js';

/**
 * A load-balancing endpoint now: requests waiting and in flight, workers by state, each serving worker.
 *
 * @typedef {object} LbNow
 * @property {number} waiting
 * @property {number} inFlight
 * @property {{ ready: number, initializing: number, unhealthy: number }} workers
 * @property {{ workerId: string, inFlight: number, draining: boolean }[]} serving
 */

/**
 * A load-balancing endpoint's chart titles and series names (no queue delay of its own: that chart is hidden).
 *
 * @type {Record<string, { title: string, names: string[] }>}
 */
export const HTTP_CHARTS = {
  jobs: { title: 'Requests per second', names: ['answered', 'failed'] },
  queue: { title: 'Requests waiting for a worker', names: ['waiting'] },
  exec: { title: 'Request time (arrival to last byte)', names: ['p50', 'p95'] },
};

/**
 * "Now: 2 ready · 1 initializing · 0 unhealthy · 3 requests in flight · 0 waiting · gen-a 2, gen-b 1 in flight",
 * each figure in a span with data-figure (lb.ready, lb.inFlight, lb.worker.<id>, ...).
 *
 * @param {LbNow | undefined} lb
 */
export function renderLb(lb) {
  const box = $('monitor-lb');
  box.hidden = !lb;
  if (!lb) return box.replaceChildren();
  /**
   * @param {string} name
   * @param {number} value
   * @param {string} text
   */
  const fig = (name, value, text) => {
    const v = el('span', { className: 'figure', textContent: String(value) });
    v.dataset.figure = `lb.${name}`;
    return el('span', { className: 'legend-item' }, [v, ` ${text}`]);
  };
  const serving = lb.serving.map((w) => {
    const v = el('span', { className: 'figure', textContent: String(w.inFlight) });
    v.dataset.figure = `lb.worker.${w.workerId}`;
    return el('span', { className: 'legend-item' }, [`${w.workerId}${w.draining ? ' (draining)' : ''}: `, v]);
  });
  box.replaceChildren(
    'Now: ',
    fig('ready', lb.workers.ready, 'ready'),
    fig('initializing', lb.workers.initializing, 'initializing'),
    fig('unhealthy', lb.workers.unhealthy, 'unhealthy'),
    fig('inFlight', lb.inFlight, `request${lb.inFlight === 1 ? '' : 's'} in flight`),
    fig('waiting', lb.waiting, 'waiting'),
    ...(serving.length ? [el('span', { className: 'muted' }, [' · in flight per worker: ']), ...serving] : []),
  );
}
