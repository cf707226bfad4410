// The playground page: picks an endpoint or public model from the catalog, builds its input form, runs jobs through
// /run (following status and stream) or /runsync, shows the output, code snippets and the endpoint's jobs.
import { api, ApiError, followStream, getKey, route, setKey, takeKeyFromFragment, TERMINAL, withoutSecrets } from './api.js';
import { createInputForm } from './form.js';
import { loadHealth, loadJobs, showJob } from './jobs.js';
import { chunkText, outputText, renderMedia } from './output.js';
import { copyText, LANGUAGES, snippets } from './snippets.js';

const $ = (id) => document.getElementById(id);
const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
});
const errorText = (err) => (err instanceof ApiError ? err.text : err.message ?? String(err));
function show(id, message) {
  $(id).textContent = message ?? '';
  $(id).hidden = !message;
}

const state = { targets: new Map(), target: undefined, form: undefined, lang: sessionStorage.getItem('berth.lang') ?? 'curl', job: undefined, follow: undefined, streamed: '' };

// --- API key ---------------------------------------------------------------------------------------------------
takeKeyFromFragment();
const keyStatus = () => ($('key-status').textContent = getKey() ? 'Key set for this tab.' : 'No key yet.');
$('key-form').addEventListener('submit', (e) => {
  e.preventDefault();
  setKey($('api-key').value.trim());
  $('api-key').value = '';
  keyStatus();
  void loadCatalog();
});
$('forget-key').addEventListener('click', () => (setKey(''), keyStatus()));
keyStatus();

// --- Catalog and picker ----------------------------------------------------------------------------------------
async function loadCatalog() {
  if (!getKey()) return show('page-error', 'Enter the API key (berth dev prints it), or open this page as /#key=<your key>.');
  let catalog;
  try {
    catalog = await api('/v2/_berth/catalog');
  } catch (err) {
    return show('page-error', `Could not load endpoints: ${errorText(err)}${err.status === 401 ? ' (check the API key)' : ''}`);
  }
  show('page-error');
  const select = $('target');
  select.replaceChildren();
  state.targets.clear();
  const streams = new Map(catalog.endpoints.map((e) => [e.id, e.stream]));
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
  group('Endpoints', catalog.endpoints.map((e) => ({ key: `ep:${e.id}`, label: e.id, id: e.id, endpoint: e.id, stream: e.stream, schema: e.inputSchema, priced: false, info: e })));
  group('Public models', (catalog.models ?? []).map((m) => ({ key: `model:${m.slug}`, label: `${m.slug} (${m.kind})`, id: m.slug, endpoint: m.endpoint, stream: streams.get(m.endpoint) === true, schema: m.inputSchema, priced: m.priced, info: m })));
  const saved = sessionStorage.getItem('berth.target');
  if (saved && state.targets.has(saved)) select.value = saved;
  selectTarget();
}

function selectTarget() {
  const t = state.targets.get($('target').value);
  if (!t) return;
  state.target = t;
  sessionStorage.setItem('berth.target', t.key);
  const info = t.info;
  const w = info.workers ? ` · workers: ${Object.entries(info.workers).map(([k, v]) => `${k} ${v}`).join(', ')}` : '';
  $('target-info').textContent = info.slug
    ? `${info.description ?? ''} · served by endpoint ${info.endpoint}${info.priced ? ' · priced' : ''}`
    : `${t.stream ? 'Streams output' : 'Does not stream'}${t.schema ? '' : ' · no input schema announced: edit the input as JSON'}${w}`;
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
}
$('target').addEventListener('change', selectTarget);

// --- Input changes: snippets and the cost estimate -------------------------------------------------------------
let estimateTimer;
let estimateSeq = 0;
function onInputChange() {
  let input;
  try {
    input = state.form.read();
  } catch {
    return; // the form shows the JSON error; keep the last snippets
  }
  try {
    sessionStorage.setItem(`berth.input.${state.target.key}`, JSON.stringify(input));
  } catch {
    // over the storage quota (a large inline input): just not remembered
  }
  renderSnippets(input);
  clearTimeout(estimateTimer);
  if (!state.target.priced) return show('estimate');
  estimateTimer = setTimeout(async () => {
    const seq = ++estimateSeq;
    try {
      const { cost } = await api(route(state.target.id, 'estimate'), { method: 'POST', body: { input } });
      if (seq === estimateSeq) show('estimate', `Estimated cost: ${cost}`);
    } catch (err) {
      if (seq === estimateSeq) show('estimate', `No estimate: ${errorText(err)}`);
    }
  }, 350);
}

function renderSnippets(input) {
  const code = snippets(state.lang, location.origin, state.target.id, input);
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
  button.addEventListener('click', async () => {
    const pre = $(`snippet-${button.dataset.snippet}`);
    const ok = await copyText(pre.textContent, pre);
    $('copy-status').textContent = ok ? `Copied the /${button.dataset.snippet} code.` : 'Selected: press Ctrl+C (or Cmd+C) to copy.';
  });
}

// --- Running jobs ----------------------------------------------------------------------------------------------
function showJobState(job) {
  state.job = job;
  const j = state.job;
  $('job-status').textContent = j.status ?? '–';
  $('job-status').className = `badge s-${j.status}`;
  $('job-id').textContent = j.id ?? '–';
  $('job-delay').textContent = typeof j.delayTime === 'number' ? `${j.delayTime} ms` : '–';
  $('job-exec').textContent = typeof j.executionTime === 'number' ? `${j.executionTime} ms` : '–';
  $('job-worker').textContent = j.workerId ?? '–';
  const progress = j.progress ?? (j.status === 'IN_PROGRESS' ? j.output : undefined);
  $('job-progress').textContent = progress === undefined ? '–' : typeof progress === 'string' ? progress : JSON.stringify(progress);
  $('job-cost').textContent = typeof j.output?.cost === 'number' && j.status === 'COMPLETED' ? String(j.output.cost) : '–';
  $('raw-json').textContent = JSON.stringify(withoutSecrets(j), null, 2);
  const live = j.status === 'IN_QUEUE' || j.status === 'IN_PROGRESS';
  $('cancel').disabled = !(live && j.id);
  $('retry').disabled = !(j.id && (j.status === 'FAILED' || j.status === 'TIMED_OUT'));
  if (j.error) show('run-error', `Job ${j.status}: ${typeof j.error === 'string' ? j.error : JSON.stringify(j.error)}`);
  if (j.status === 'COMPLETED') {
    renderMedia($('media'), j.output);
    const text = outputText(j.output);
    if (text !== undefined && !(text === '' && state.streamed)) setText(text);
  }
}

function setText(text, streaming = false) {
  $('text-output').setAttribute('aria-busy', String(streaming));
  $('text-output').textContent = text;
  $('text-box').hidden = text === '';
}

function resetResult() {
  state.follow?.abort();
  state.job = undefined;
  state.streamed = '';
  setText('');
  show('run-error');
  $('media').replaceChildren();
}

async function follow(target, id) {
  state.follow?.abort();
  const ctl = new AbortController();
  state.follow = ctl;
  const { signal } = ctl;
  // The stream has its own controller: once the job is terminal it gets a few seconds to deliver what is left.
  const streamCtl = new AbortController();
  signal.addEventListener('abort', () => streamCtl.abort(), { once: true });
  const streaming = target.stream
    ? followStream(target.id, id, (chunk) => {
        const piece = chunkText(chunk);
        if (!piece || streamCtl.signal.aborted) return;
        state.streamed += piece;
        setText(state.streamed, true);
      }, streamCtl.signal).catch((err) => {
        if (err.name !== 'AbortError') show('run-error', `Stream: ${errorText(err)}`);
      })
    : Promise.resolve();
  let job;
  try {
    for (;;) {
      job = await api(route(target.id, 'status', id), { signal });
      if (signal.aborted) return;
      showJobState(job);
      if (TERMINAL.has(job.status)) break;
      await sleep(500, signal);
      if (signal.aborted) return;
    }
  } catch (err) {
    if (err.name !== 'AbortError') show('run-error', errorText(err));
    return;
  }
  await Promise.race([streaming, sleep(3000, signal)]);
  streamCtl.abort();
  if (!signal.aborted) {
    showJobState(job);
    void refreshJobs();
  }
}

async function submit(sync) {
  const target = state.target;
  if (!target) return;
  let input;
  try {
    input = state.form.read();
  } catch (err) {
    return show('run-error', err.message);
  }
  resetResult();
  state.jobTarget = target;
  $('result-target').textContent = `of ${target.id}`;
  showJobState({ status: 'SUBMITTING' });
  for (const b of [$('run'), $('runsync')]) b.disabled = true;
  try {
    if (sync) {
      const job = await api(route(target.id, 'runsync'), { method: 'POST', body: { input } });
      showJobState(job);
      if (!TERMINAL.has(job.status)) void follow(target, job.id);
      else void refreshJobs();
    } else {
      const { id, status } = await api(route(target.id, 'run'), { method: 'POST', body: { input } });
      showJobState({ id, status });
      void follow(target, id);
    }
  } catch (err) {
    showJobState({ status: 'ERROR' });
    show('run-error', errorText(err));
  } finally {
    for (const b of [$('run'), $('runsync')]) b.disabled = false;
  }
}
$('input-form').addEventListener('submit', (e) => {
  e.preventDefault();
  void submit(false);
});
$('runsync').addEventListener('click', () => void submit(true));

$('cancel').addEventListener('click', async () => {
  const { id } = state.job ?? {};
  $('cancel').disabled = true;
  try {
    showJobState(await api(route(state.jobTarget.id, 'cancel', id), { method: 'POST' }));
    void refreshJobs();
  } catch (err) {
    show('run-error', `Cancel: ${errorText(err)}`);
  }
});
$('retry').addEventListener('click', async () => {
  const { id } = state.job ?? {};
  const target = state.jobTarget;
  $('retry').disabled = true;
  try {
    const job = await api(route(target.id, 'retry', id), { method: 'POST' });
    resetResult();
    showJobState({ ...job, id });
    void follow(target, id);
  } catch (err) {
    show('run-error', `Retry: ${errorText(err)}`);
  }
});

// --- Jobs view and health --------------------------------------------------------------------------------------
async function refreshJobs() {
  const t = state.target;
  if (!t) return;
  try {
    await Promise.all([
      loadHealth(t.endpoint, $('health')),
      loadJobs(t.endpoint, $('jobs'), (job) => {
        showJob(t.endpoint, job.id, $('job-detail')).catch((err) => show('jobs-error', errorText(err)));
      }),
    ]);
    show('jobs-error');
  } catch (err) {
    show('jobs-error', `Jobs: ${errorText(err)}`);
  }
}
$('refresh-jobs').addEventListener('click', () => void refreshJobs());
setInterval(() => {
  if (!document.hidden && state.target) void refreshJobs();
}, 4000);

void loadCatalog();
