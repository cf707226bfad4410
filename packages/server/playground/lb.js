// @ts-check
// A load-balancing endpoint's request panel: method, path, affinity (X-Runpod-Worker-Id) and body sent to
// /v2/<ep>/lb/<path>; the answer's status, worker, content type, body read chunk by chunk, and a proxy error's code.
import { getKey } from './api.js';
import { $, errorText, show } from './dom.js';

/** @type {AbortController | undefined} the answer being read (a new Send stops it) */
let sending;
/** @param {string} id */
const value = (id) => /** @type {HTMLInputElement} */ ($(id)).value.trim();
/** @param {string} id @param {string} text */
const set = (id, text) => ($(id).textContent = text);

/**
 * Shows the request panel of the load-balancing `endpoint`, or the job panels (`undefined`: a queue endpoint).
 *
 * @param {string | undefined} endpoint
 */
export function showLb(endpoint) {
  for (const id of ['input-form', 'job-view', 'code', 'jobs-view']) $(id).hidden = !!endpoint;
  for (const id of ['lb-form', 'lb-answer']) $(id).hidden = !endpoint;
  set('lb-prefix', `/v2/${endpoint}/lb`);
}

/** @param {() => string | undefined} endpoint the picked load-balancing endpoint */
export function mountLb(endpoint) {
  $('lb-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const ep = endpoint();
    if (ep) void send(ep);
  });
}

/** @param {string} ep */
async function send(ep) {
  sending?.abort();
  const ctl = (sending = new AbortController());
  const method = value('lb-method');
  const body = method === 'GET' ? '' : value('lb-body');
  const headers = new Headers({ Authorization: `Bearer ${getKey()}` });
  if (body) headers.set('Content-Type', json(body) !== undefined ? 'application/json' : 'text/plain');
  if (value('lb-affinity')) headers.set('X-Runpod-Worker-Id', value('lb-affinity'));
  for (const id of ['lb-status', 'lb-worker', 'lb-type', 'lb-got', 'lb-out']) set(id, '');
  show('lb-error');
  const t0 = performance.now();
  const got = (/** @type {string} */ end) =>
    set('lb-got', `chunks: ${chunks} · ${text.length} chars · ${end} ${Math.round(performance.now() - t0)} ms`);
  let chunks = 0;
  let text = '';
  try {
    const path = value('lb-path').replace(/^\/+/, '');
    const res = await fetch(`/v2/${ep}/lb/${path}`, { method, headers, body: body || null, signal: ctl.signal });
    set('lb-status', `${res.status} ${res.statusText}`);
    set('lb-worker', res.headers.get('x-runpod-worker-id') ?? 'none');
    set('lb-type', res.headers.get('content-type') ?? '');
    const reader = res.body?.pipeThrough(new TextDecoderStream()).getReader();
    for (let r; reader && !(r = await reader.read()).done; chunks++, got('at')) {
      text += r.value;
      $('lb-out').append(r.value);
    }
    got('done in');
    const err = res.ok ? undefined : json(text);
    if (typeof err?.code === 'string') show('lb-error', `${res.status} ${err.code}: ${err.error}`);
  } catch (err) {
    if (!ctl.signal.aborted) show('lb-error', errorText(err));
  }
}

/**
 * @param {string} text
 * @returns {any} its JSON value, or undefined when it is not JSON
 */
function json(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
