/**
 * The engine thread: loads the model and runs the continuous-batching engine off the worker's main thread, so
 * that onnxruntime's forward passes (which run synchronously on the calling thread) overlap the per-token work
 * of the main thread (chunks, frames, socket writes). Started by `ThreadEngine`; speaks `protocol.ts`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger, LOG_LEVELS, type LogLevel } from '@berth/worker';
import { BatchEngine } from '../engine/batch-engine.js';
import { loadModel } from '../load.js';
import type { FromThread, ThreadData, ThreadEvent, ToThread } from './protocol.js';

const port = parentPort!;
const data = workerData as ThreadData;
const level = (LOG_LEVELS as readonly string[]).includes(data.logLevel) ? (data.logLevel as LogLevel) : 'info';
const log = createLogger({ level, bindings: { thread: 'engine' } });
const post = (m: FromThread) => port.postMessage(m);

try {
  const o = data.options;
  const loaded = await loadModel(o, log);
  const engine = new BatchEngine(loaded.model, {
    decode: (ids) => loaded.tokenizer.decode(ids, { skip_special_tokens: true }),
    eosTokenIds: o.ignoreEos ? [] : loaded.eosTokenIds,
    contextLength: loaded.contextLength,
    maxBatch: o.maxBatch,
  });
  // Events of one turn (every row's text of one forward pass, the results it finished) leave in one message.
  let out: ThreadEvent[] = [];
  const push = (e: ThreadEvent) => {
    if (out.length === 0) queueMicrotask(flush);
    out.push(e);
  };
  const flush = () => {
    const events = out;
    out = [];
    post({ t: 'events', events });
  };
  const running = new Map<number, AbortController>();
  port.on('message', (m: ToThread) => {
    if (m.t === 'cancel') return running.get(m.id)?.abort();
    const ac = new AbortController();
    running.set(m.id, ac);
    const { stream, ...req } = m.req;
    engine
      .generate({ ...req, signal: ac.signal, ...(stream ? { onDelta: (text) => push(['d', m.id, text]) } : {}) })
      .then(
        (result) => push(['done', m.id, result]),
        (err: unknown) => push(['fail', m.id, err instanceof Error ? err.message : String(err)]),
      )
      .finally(() => running.delete(m.id));
  });
  post({ t: 'ready', eosTokenIds: loaded.eosTokenIds, contextLength: loaded.contextLength, loadMs: loaded.loadMs });
} catch (err) {
  post({ t: 'loadError', message: err instanceof Error ? err.message : String(err) });
}
