// @ts-check
// The batches view: an endpoint's Batch Jobs (GET /v2/<ep>/batch, newest first) with their state and counts
// (docs/api.md, "Batch Jobs"). Shown under the endpoint's jobs; hidden for a target without batches (a model).
import { api, route } from './api.js';
import { el } from './dom.js';

/**
 * A batch as GET /v2/<ep>/batch lists it.
 *
 * @typedef {{ id: string, name?: string, status: string, requestTotal: number, requestQueued: number,
 *   requestInProgress: number, requestCompleted: number, requestFailed: number, requestCancelled: number,
 *   requestExpired: number, progress: number, done: boolean, createdAt: number }} BatchRow
 */

/** The count cells of a row, in column order: [field, header]. */
export const BATCH_COUNTS = /** @type {const} */ ([
  ['requestTotal', 'Total'],
  ['requestQueued', 'Queued'],
  ['requestInProgress', 'Running'],
  ['requestCompleted', 'Completed'],
  ['requestFailed', 'Failed'],
  ['requestCancelled', 'Cancelled'],
]);

/**
 * Fills `tbody` with a row per batch (newest 20); answers the batches, or undefined when the target has none
 * (the route answers 404: not an endpoint, or a store without batches).
 *
 * @param {string} endpoint
 * @param {HTMLElement} tbody
 * @param {AbortSignal} [signal]
 * @returns {Promise<BatchRow[] | undefined>}
 */
export async function loadBatches(endpoint, tbody, signal) {
  /** @type {{ batches: BatchRow[] }} */
  let answer;
  try {
    answer = await api(`${route(endpoint, 'batch')}?limit=20`, { signal });
  } catch (err) {
    if (/** @type {{ status?: number }} */ (err).status === 404) return undefined;
    throw err;
  }
  const { batches } = answer;
  tbody.replaceChildren(
    ...batches.map((b) => {
      const state = b.status === 'FINALIZED' ? (b.done ? 'DONE' : 'RUNNING') : b.status;
      const row = el('tr', {}, [
        el('td', { className: 'mono', textContent: b.name ? `${b.name} (${short(b.id)})` : short(b.id), title: b.id }),
        el('td', {}, [el('span', { className: `badge s-${b.status}`, textContent: b.status, title: state })]),
        ...BATCH_COUNTS.map(([field]) => {
          const td = el('td', { textContent: String(b[field] ?? 0) });
          td.dataset.count = field;
          return td;
        }),
        el('td', { textContent: `${Math.round((b.progress ?? 0) * 100)}%${b.done ? ' · done' : ''}` }),
      ]);
      row.dataset.batchId = b.id;
      return row;
    }),
  );
  if (batches.length === 0)
    tbody.append(el('tr', {}, [el('td', { colSpan: 9, className: 'muted', textContent: 'No batches yet.' })]));
  return batches;
}

/** @param {string} id */
const short = (id) => (id.length > 20 ? `${id.slice(0, 12)}…${id.slice(-6)}` : id);
