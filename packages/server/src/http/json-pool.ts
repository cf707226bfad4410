import { Worker } from 'node:worker_threads';
import { LIMITS } from '@berth/protocol';

/**
 * Big JSON (a request body or a worker frame of `BIG_JSON_BYTES` or more) is parsed and checked on a small pool of
 * worker threads, not on the event loop (issue #31: a 19 MB body took 60-100 ms of decode, parse and scan, and ten
 * at once stalled every other request that long each). The thread checks what `parseJsonBody` checks (UTF-8,
 * syntax, depth, non-finite numbers) and answers the value with one top-level key (`input`, `output`) left out,
 * plus the byte range of that key's value in the original bytes: the caller keeps those bytes as a `RawJson`.
 */
export const BIG_JSON_BYTES = 1024 * 1024;

/** What a thread answers. */
export type PoolResult =
  | { ok: true; value: unknown; span?: [number, number] }
  | { ok: false; code: 'invalid_json' | 'invalid_request'; message: string; field?: string };

/** Threads in the pool (started when first needed; they do not keep the process alive). */
const THREADS = 2;

// Plain JavaScript, run with `eval: true` so it needs no file beside the compiled one (tests run the sources).
const THREAD_CODE = `
const { parentPort, workerData } = require('node:worker_threads');
const MAX_DEPTH = workerData.maxDepth;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const isWs = (c) => c === 32 || c === 9 || c === 10 || c === 13;
function strEnd(b, i) {
  for (let q = b.indexOf(34, i + 1); ; q = b.indexOf(34, q + 1)) {
    let k = q - 1;
    while (b[k] === 92) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
  }
}
function valEnd(b, i) {
  const c = b[i];
  if (c === 34) return strEnd(b, i);
  if (c === 123 || c === 91) {
    let d = 0;
    for (;;) {
      const x = b[i];
      if (x === 34) { i = strEnd(b, i); continue; }
      if (x === 123 || x === 91) d++;
      else if (x === 125 || x === 93) { if (--d === 0) return i + 1; }
      i++;
    }
  }
  while (i < b.length && b[i] !== 44 && b[i] !== 125 && b[i] !== 93 && !isWs(b[i])) i++;
  return i;
}
// Byte range of the value of the last top-level key named key (JSON.parse keeps the last of duplicates).
function span(b, key) {
  let i = 0, found;
  while (isWs(b[i])) i++;
  if (b[i] !== 123) return undefined;
  i++;
  for (;;) {
    while (isWs(b[i])) i++;
    if (b[i] !== 34) return found;
    const ks = i;
    i = strEnd(b, i);
    const k = JSON.parse(b.toString('utf8', ks, i));
    while (isWs(b[i])) i++;
    i++;
    while (isWs(b[i])) i++;
    const vs = i;
    i = valEnd(b, i);
    if (k === key) found = [vs, i];
    while (isWs(b[i])) i++;
    if (b[i] === 44) i++;
  }
}
// Depth over MAX_DEPTH, or the path of the first non-finite number (JSON.parse turns 1e999 into Infinity).
function check(v, path, depth) {
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : { code: 'invalid_request', field: path };
  if (v === null || typeof v !== 'object') return undefined;
  if (depth + 1 > MAX_DEPTH) return { code: 'invalid_json' };
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const r = check(v[i], path + '[' + i + ']', depth + 1);
      if (r) return r;
    }
    return undefined;
  }
  for (const k of Object.keys(v)) {
    const r = check(v[k], path === '' ? k : path + '.' + k, depth + 1);
    if (r) return r;
  }
  return undefined;
}
function run(bytes, key) {
  let text;
  try { text = utf8.decode(bytes); } catch { return { ok: false, code: 'invalid_json', message: 'request body is not valid UTF-8' }; }
  if (text.trim() === '') return { ok: false, code: 'invalid_json', message: 'request body is empty; send a JSON object like {"input": {...}}' };
  let value;
  try { value = JSON.parse(text); } catch (err) {
    return { ok: false, code: 'invalid_json', message: 'request body is not valid JSON: ' + err.message };
  }
  text = undefined;
  const bad = check(value, '', 0);
  if (bad && bad.code === 'invalid_json') return { ok: false, code: 'invalid_json', message: 'JSON nested deeper than ' + MAX_DEPTH + ' levels' };
  if (bad) return { ok: false, code: 'invalid_request', field: bad.field, message: (bad.field || 'the body') + ': number out of range (JSON numbers must fit a 64-bit float, like 1.7e308 at most)' };
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !(key in value)) return { ok: true, value };
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const s = span(b, key);
  if (!s) return { ok: true, value };
  delete value[key];
  return { ok: true, value, span: s };
}
parentPort.on('message', (m) => {
  let r;
  try { r = run(m.bytes, m.key); } catch (err) { r = { ok: false, code: 'invalid_json', message: 'request body could not be parsed: ' + err.message }; }
  parentPort.postMessage({ id: m.id, r });
});
`;

interface Thread {
  worker: Worker;
  pending: Map<number, (r: PoolResult) => void>;
}

const threads: (Thread | undefined)[] = [];
let nextId = 0;

function thread(): Thread {
  // The least busy thread; a missing one (not yet started, or died) is started.
  let best = -1;
  for (let i = 0; i < THREADS; i++) {
    const t = threads[i];
    if (!t) {
      best = i;
      break;
    }
    if (best < 0 || t.pending.size < threads[best]!.pending.size) best = i;
  }
  const have = threads[best];
  if (have) return have;
  const worker = new Worker(THREAD_CODE, { eval: true, workerData: { maxDepth: LIMITS.jsonMaxDepth } });
  const t: Thread = { worker, pending: new Map() };
  const fail = (message: string) => {
    if (threads[best] === t) threads[best] = undefined;
    for (const done of t.pending.values()) done({ ok: false, code: 'invalid_json', message });
    t.pending.clear();
  };
  worker.on('message', (m: { id: number; r: PoolResult }) => {
    const done = t.pending.get(m.id);
    t.pending.delete(m.id);
    if (t.pending.size === 0) worker.unref();
    done?.(m.r);
  });
  worker.on('error', (err) => fail(`request body could not be parsed: ${err.message}`));
  worker.on('exit', () => fail('request body could not be parsed: the parsing thread exited'));
  worker.unref();
  threads[best] = t;
  return t;
}

/**
 * Parses `bytes` (JSON) on a pool thread. With `key`, a top-level object's value under `key` is left out of the
 * answer and its byte range returned instead (`span`), when it could be found; else the whole value comes back.
 */
export function parseOffThread(bytes: Uint8Array, key: string): Promise<PoolResult> {
  const t = thread();
  const id = nextId++;
  if (t.pending.size === 0) t.worker.ref(); // a parse in flight keeps the process up until it answers
  return new Promise<PoolResult>((resolve) => {
    t.pending.set(id, resolve);
    t.worker.postMessage({ id, bytes, key });
  });
}
