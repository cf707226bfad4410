import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { BerthError, LIMITS } from '@berth/protocol';
import type { FromThread, ToThread, WireError } from './ingest-wire.js';
import { MAX_OTHER_BYTES, type JsonCheckOptions, type JsonCheckResult } from './json-check.js';

/**
 * Ingests (issue #35): a body's bytes written to a file and checked as JSON (`json-check.ts`) on a pool thread
 * (`ingest-thread.ts`), off the event loop. Two threads, started on first use, that keep the process alive only
 * while they have work.
 */
export interface IngestOptions {
  /** The top-level key whose value's byte span is found (`input`); the other fields are parsed and capped. */
  key?: string;
  maxDepth?: number;
  /** Bytes of the other top-level fields in all (default 64 KiB): past it, 413. */
  maxOtherBytes?: number;
  /** fsync the file before `end()` resolves. */
  fsync: boolean;
}

/** `{ size, sha256, span?, keyKind, fields }`: what the check found, once the file is written. */
export type IngestResult = JsonCheckResult;

export interface Ingest {
  /**
   * Sends bytes (copied, then the copy transferred: the caller may reuse `chunk`, as an in-process caller of
   * `handle()` yielding one buffer again and again does); resolves when the thread's backlog is under 1 MiB.
   */
  write(chunk: Uint8Array): Promise<void>;
  /** The check's result once every byte is written (and fsynced); a bad body rejects with its `BerthError`. */
  end(): Promise<IngestResult>;
  /** Stops the ingest and deletes its file. */
  abort(): Promise<void>;
}

const THREADS = 2;
/** Bytes sent to a thread and not yet written past which `write` waits. */
const BACKLOG_BYTES = 1024 * 1024;

interface Thread {
  worker: Worker;
  handlers: Map<number, (m: FromThread) => void>;
}

const threads: (Thread | undefined)[] = [];
let nextId = 0;

const toError = (e: WireError) => new BerthError(e.code, e.message, e.details);

/**
 * The thread: the compiled `ingest-thread.js` beside this file, or under vitest (this file is the `.ts` source) the
 * `.ts` source loaded through tsx's loader, registered inside the thread (on Node 20 a worker's `--import` in
 * `execArgv` does not reach its entry module).
 */
interface TsxPackage {
  exports: { './esm/api': { import: { default: string } } };
}

function spawn(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./ingest-thread.js', import.meta.url));
  // tsx's ESM entry (`require.resolve` gives the CommonJS one, which cannot register from a worker).
  const pkg = createRequire(import.meta.url).resolve('tsx/package.json');
  const api = join(
    dirname(pkg),
    (JSON.parse(readFileSync(pkg, 'utf8')) as TsxPackage).exports['./esm/api'].import.default,
  );
  const entry = new URL('./ingest-thread.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(pathToFileURL(api).href)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(code, { eval: true });
}

function startThread(slot: number): Thread {
  const worker = spawn();
  const t: Thread = { worker, handlers: new Map() };
  worker.on('message', (m: FromThread) => t.handlers.get(m.id)?.(m));
  const fail = (message: string) => {
    if (threads[slot] === t) threads[slot] = undefined;
    const error = { code: 'internal_error', message } as const;
    for (const [id, handler] of t.handlers) handler({ op: 'failed', id, error });
    t.handlers.clear();
  };
  worker.on('error', (err) => fail(`the ingest thread failed: ${err.message}`));
  worker.on('exit', () => fail('the ingest thread exited'));
  worker.unref();
  threads[slot] = t;
  return t;
}

/** The least busy thread (a missing one is started) and an id registered on it. */
function register(handler: (m: FromThread) => void): { t: Thread; id: number; done: () => void } {
  // Least busy first; between equals, a running thread before starting one.
  let slot = 0;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < THREADS; i++) {
    const t = threads[i];
    const score = t ? t.handlers.size * 2 : 1;
    if (score < best) [slot, best] = [i, score];
  }
  const t = threads[slot] ?? startThread(slot);
  const id = nextId++;
  if (t.handlers.size === 0) t.worker.ref();
  t.handlers.set(id, handler);
  const done = () => {
    if (t.handlers.delete(id) && t.handlers.size === 0) t.worker.unref();
  };
  return { t, id, done };
}

/** Starts writing a file at `path` (created or truncated) while its bytes are checked as JSON. */
export function startIngest(path: string, opts: IngestOptions): Ingest {
  let backlog = 0;
  let error: BerthError | undefined;
  let result: IngestResult | undefined;
  const waiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  let ending: { resolve: (r: IngestResult) => void; reject: (e: Error) => void } | undefined;
  let aborted: (() => void) | undefined;
  const { t, id, done } = register((m) => {
    if (m.op === 'written') {
      backlog -= m.bytes;
      if (backlog < BACKLOG_BYTES) for (const w of waiters.splice(0)) w.resolve();
    } else if (m.op === 'done') {
      done();
      result = m.result;
      ending?.resolve(m.result);
      // abort() raced with end(): the file was written whole; delete it as abort() promised.
      if (aborted) void rm(path, { force: true }).finally(aborted);
    } else if (m.op === 'failed') {
      done();
      error = toError(m.error);
      for (const w of waiters.splice(0)) w.reject(error);
      ending?.reject(error);
      aborted?.();
    } else if (m.op === 'aborted') {
      done();
      aborted?.();
    }
  });
  const post = (m: ToThread, transfer?: ArrayBuffer[]) => t.worker.postMessage(m, transfer);
  const start: ToThread = {
    op: 'start',
    id,
    path,
    maxDepth: opts.maxDepth ?? LIMITS.jsonMaxDepth,
    maxOtherBytes: opts.maxOtherBytes ?? MAX_OTHER_BYTES,
    fsync: opts.fsync,
  };
  if (opts.key !== undefined) start.key = opts.key;
  post(start);
  let endPromise: Promise<IngestResult> | undefined;
  return {
    write(chunk) {
      if (error) return Promise.reject(error);
      if (endPromise || aborted) return Promise.reject(new Error('write after end() or abort()'));
      const copy = new Uint8Array(chunk); // its own ArrayBuffer, transferred
      backlog += copy.length;
      post({ op: 'write', id, chunk: copy }, [copy.buffer]);
      if (backlog < BACKLOG_BYTES) return Promise.resolve();
      return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
    },
    end() {
      if (error) return Promise.reject(error);
      endPromise ??= new Promise<IngestResult>((resolve, reject) => {
        ending = { resolve, reject };
        post({ op: 'end', id });
      });
      return endPromise;
    },
    async abort() {
      if (result) return rm(path, { force: true });
      if (error || aborted) return;
      await new Promise<void>((resolve) => {
        aborted = resolve;
        post({ op: 'abort', id });
      });
      const gone = new Error('ingest aborted');
      for (const w of waiters.splice(0)) w.reject(gone);
    },
  };
}

/** Checks a whole buffer of JSON on a pool thread (`parseOffThread`); rejects with its `BerthError`. */
export function checkOnPool(bytes: Uint8Array, opts: Partial<JsonCheckOptions>): Promise<JsonCheckResult> {
  return new Promise((resolve, reject) => {
    const { t, id, done } = register((m) => {
      done();
      if (m.op === 'parsed') resolve(m.result);
      else if (m.op === 'failed') reject(toError(m.error));
    });
    const full: JsonCheckOptions = { ...opts, maxDepth: opts.maxDepth ?? LIMITS.jsonMaxDepth };
    t.worker.postMessage({ op: 'parse', id, bytes, opts: full } satisfies ToThread);
  });
}
