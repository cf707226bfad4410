// @ts-check
// The playground page: picks an endpoint or public model from the catalog, builds its input form, runs jobs through
// /run (following status and stream) or /runsync, shows the output, code snippets and the endpoint's jobs.
import { api, ApiError, getKey, route, setKey, takeKeyFromFragment } from './api.js';
import { $, errorText, show } from './dom.js';
import { createInputForm } from './form.js';
import { loadHealth, loadJobs, showJob } from './jobs.js';
import { loadBatches } from './batches.js';
import { mountLb, showLb } from './lb.js';
import { mountMonitor } from './monitor.js';
import { mountRunner, openJob } from './run.js';
import { copyText, LANGUAGES, snippets } from './snippets.js';
import { problemText } from './validate.js';

/**
 * An endpoint or public model the picker offers.
 *
 * @typedef {object} Target
 * @property {string} key `ep:<id>` or `model:<slug>`
 * @property {string} label
 * @property {string} id the endpoint id or model slug (the route's target)
 * @property {string} endpoint the endpoint that serves it
 * @property {boolean} stream
 * @property {boolean} [http] a load-balancing endpoint (`"type": "http"`): requests go to its `/lb/<path>`
 * @property {import('./validate.js').JsonSchema | undefined} schema
 * @property {boolean} priced
 * @property {any} info the catalog entry
 */

/**
 * @type {{ targets: Map<string, Target>, streams: Map<string, boolean>, target: Target | undefined,
 *   form: import('./form.js').InputForm | undefined, lang: string }}
 */
const state = {
  targets: new Map(),
  streams: new Map(),
  target: undefined,
  form: undefined,
  lang: sessionStorage.getItem('berth.lang') ?? 'curl',
};
/** The form of the picked target (there is one once a target is picked). */
const form = () => /** @type {import('./form.js').InputForm} */ (state.form);
/** The picked target (inputs change and jobs run only once one is picked). */
const target = () => /** @type {Target} */ (state.target);

// --- API key ---------------------------------------------------------------------------------------------------
takeKeyFromFragment();
const keyStatus = () => ($('key-status').textContent = getKey() ? 'Checking the key…' : 'No key yet.');
$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const keyField = /** @type {HTMLInputElement} */ ($('api-key'));
  setKey(keyField.value.trim());
  keyField.value = '';
  show('page-error'); // the last key's error is stale now; loadCatalog says how this one fares
  keyStatus();
  void loadCatalog(); // the Run buttons are wired once, below: wiring them per key doubled every job
});
$('forget-key').addEventListener('click', () => (setKey(''), catalogLoads++, keyStatus()));
keyStatus();

const monitor = mountMonitor({ endpoint: () => state.target?.endpoint });

// --- Catalog and picker ----------------------------------------------------------------------------------------
let catalogLoads = 0; // only the latest load may answer: "Use key" clicked twice must not show the first key's result
async function loadCatalog() {
  if (!getKey())
    return show('page-error', 'Enter the API key (berth dev prints it), or open this page as /#key=<your key>.');
  const load = ++catalogLoads;
  /** @type {any} */
  let catalog;
  try {
    catalog = await api('/v2/_berth/catalog');
    if (load !== catalogLoads) return;
  } catch (err) {
    if (load !== catalogLoads) return;
    const refused = err instanceof ApiError && err.status === 401;
    if (refused) $('key-status').textContent = 'Key refused (401): paste another one.';
    return show('page-error', `Could not load endpoints: ${errorText(err)}${refused ? ' (check the API key)' : ''}`);
  }
  show('page-error');
  $('key-status').textContent = 'Key accepted for this tab.';
  const select = /** @type {HTMLSelectElement} */ ($('target'));
  select.replaceChildren();
  state.targets.clear();
  /** @type {Map<string, boolean>} */
  const streams = new Map(catalog.endpoints.map((/** @type {any} */ e) => [e.id, e.stream]));
  state.streams = streams;
  /**
   * @param {string} label
   * @param {Target[]} items
   */
  const group = (label, items) => {
    if (!items.length) return;
    const g = document.createElement('optgroup');
    g.label = label;
    for (const t of items) {
      state.targets.set(t.key, t);
      g.append(new Option(t.label, t.key));
    }
    select.append(g);
  };
  group(
    'Endpoints',
    catalog.endpoints.map((/** @type {any} */ e) => ({
      key: `ep:${e.id}`,
      label: e.id,
      id: e.id,
      endpoint: e.id,
      stream: e.stream,
      http: e.type === 'http',
      schema: e.inputSchema,
      priced: false,
      info: e,
    })),
  );
  group(
    'Public models',
    (catalog.models ?? []).map((/** @type {any} */ m) => ({
      key: `model:${m.slug}`,
      label: `${m.slug} (${m.kind})`,
      id: m.slug,
      endpoint: m.endpoint,
      stream: streams.get(m.endpoint) === true,
      schema: m.inputSchema,
      priced: m.priced,
      info: m,
    })),
  );
  const saved = sessionStorage.getItem('berth.target');
  if (saved && state.targets.has(saved)) select.value = saved;
  selectTarget();
}

function selectTarget() {
  const t = state.targets.get(/** @type {HTMLSelectElement} */ ($('target')).value);
  if (!t) return;
  state.target = t;
  sessionStorage.setItem('berth.target', t.key);
  const info = t.info;
  const w = info.workers
    ? ` · workers: ${Object.entries(info.workers)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`
    : '';
  showLb(t.http ? t.endpoint : undefined);
  $('target-info').textContent = info.slug
    ? `${info.description ?? ''} · served by endpoint ${info.endpoint}${info.priced ? ' · priced' : ''}`
    : t.http
      ? `HTTP endpoint (load balancing): any method and path, answered by a worker's own server${w}`
      : `${t.stream ? 'Streams output' : 'Does not stream'}${t.schema ? '' : noSchemaText(info.workers)}${w}`;
  let initial;
  try {
    initial = JSON.parse(sessionStorage.getItem(`berth.input.${t.key}`) ?? 'null') ?? undefined;
  } catch {
    initial = undefined;
  }
  state.form = createInputForm($('fields'), t.schema, initial, onInputChange);
  $('jobs-endpoint').textContent = t.endpoint;
  $('job-detail').replaceChildren();
  onInputChange();
  void refreshJobs();
  void monitor.refresh();
}
$('target').addEventListener('change', selectTarget);

/**
 * Why there is no form: its connected workers announce none, or none has connected yet to announce one.
 *
 * @param {Partial<Record<string, number>> | undefined} workers
 */
function noSchemaText(workers) {
  const up = workers ? (workers.idle ?? 0) + (workers.running ?? 0) + (workers.throttled ?? 0) : 0;
  return up > 0
    ? ' · no input schema announced: edit the input as JSON'
    : ' · no input schema announced yet (a worker announces it when it connects; the form appears then): edit the input as JSON';
}

// --- Input changes: snippets and the cost estimate -------------------------------------------------------------
/** @type {ReturnType<typeof setTimeout> | undefined} */
let estimateTimer;
let estimateSeq = 0;
function onInputChange() {
  let input;
  try {
    input = form().read();
  } catch {
    return; // the form shows the JSON error; keep the last snippets
  }
  try {
    sessionStorage.setItem(`berth.input.${target().key}`, JSON.stringify(input));
  } catch {
    // over the storage quota (a large inline input): just not remembered
  }
  renderSnippets(input);
  clearTimeout(estimateTimer);
  const problems = form().check(); // also clears the marks of fields fixed since a refused Run
  if (!target().priced) return show('estimate');
  if (problems.length) return show('estimate', `No estimate until the input is valid: ${problemText(problems)}`);
  estimateTimer = setTimeout(async () => {
    const seq = ++estimateSeq;
    try {
      const { cost } = await api(route(target().id, 'estimate'), { method: 'POST', body: { input } });
      if (seq === estimateSeq) show('estimate', `Estimated cost: ${cost}`);
    } catch (err) {
      if (seq === estimateSeq) show('estimate', `No estimate: ${errorText(err)}`);
    }
  }, 350);
}

/** @param {unknown} input */
function renderSnippets(input) {
  const code = snippets(state.lang, location.origin, target().id, input);
  $('snippet-run').textContent = code.run;
  $('snippet-runsync').textContent = code.runsync;
}
for (const [lang, label] of LANGUAGES) {
  const b = document.createElement('button');
  Object.assign(b, { type: 'button', className: 'tab', textContent: label });
  b.dataset.lang = lang;
  b.setAttribute('aria-pressed', String(lang === state.lang));
  b.addEventListener('click', () => {
    state.lang = lang;
    sessionStorage.setItem('berth.lang', lang);
    for (const other of $('snippet-langs').children) other.setAttribute('aria-pressed', String(other === b));
    onInputChange();
  });
  $('snippet-langs').append(b);
}
for (const button of document.querySelectorAll('button.copy')) {
  if (!(button instanceof HTMLButtonElement)) continue;
  button.addEventListener('click', async () => {
    const pre = $(`snippet-${button.dataset.snippet}`);
    const ok = await copyText(pre.textContent ?? '', pre);
    $('copy-status').textContent = ok
      ? `Copied the /${button.dataset.snippet} code.`
      : 'Selected: press Ctrl+C (or Cmd+C) to copy.';
  });
}

// --- Jobs view and health --------------------------------------------------------------------------------------
async function refreshJobs() {
  const t = state.target;
  if (!t || t.http) return; // a load-balancing endpoint has no jobs
  try {
    await Promise.all([
      loadHealth(t.endpoint, $('health')).then((h) => maybeLoadSchema(t, h)),
      loadJobs(t.endpoint, $('jobs'), (job) => {
        const open = (/** @type {import('./run.js').Job & { id: string }} */ j) =>
          openJob({ id: t.endpoint, stream: state.streams.get(t.endpoint) === true }, j);
        showJob(t.endpoint, job.id, $('job-detail'), open).catch((err) => show('jobs-error', errorText(err)));
      }),
      loadBatches(t.endpoint, $('batches')).then((b) => {
        $('batches-view').hidden = b === undefined;
      }),
    ]);
    show('jobs-error');
  } catch (err) {
    show('jobs-error', `Jobs: ${errorText(err)}`);
  }
}
$('refresh-jobs').addEventListener('click', () => void refreshJobs());

// An endpoint that scales from zero has no schema until a worker connects: once health shows one, ask the catalog
// again (at most every 10 s) and build the form, keeping the input typed so far.
/** @type {Map<string, number>} */
const schemaAsked = new Map();
/**
 * @param {Target} t
 * @param {any} health
 */
async function maybeLoadSchema(t, health) {
  const w = health?.workers ?? {};
  const up = (w.idle ?? 0) + (w.running ?? 0) + (w.ready ?? 0) + (w.throttled ?? 0);
  if (t.schema || t.info.slug || up === 0 || Date.now() - (schemaAsked.get(t.key) ?? 0) < 10_000) return;
  schemaAsked.set(t.key, Date.now());
  const found = (await api('/v2/_berth/catalog')).endpoints.find((/** @type {any} */ e) => e.id === t.id);
  if (!found?.inputSchema || state.target !== t) return;
  Object.assign(t, { schema: found.inputSchema, info: found });
  selectTarget();
}
setInterval(() => {
  if (!document.hidden && state.target) void refreshJobs();
}, 4000);

mountRunner({
  target: () => state.target,
  input: () => form().read(),
  problems: (mark) => form().check(mark),
  settled: () => void refreshJobs(),
});
mountLb(() => (state.target?.http ? state.target.endpoint : undefined));
void loadCatalog();
