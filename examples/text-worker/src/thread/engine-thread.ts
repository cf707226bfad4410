/**
 * The engine thread: loads the model and runs the continuous-batching engine off the worker's main thread, so
 * that onnxruntime's forward passes (which run synchronously on the calling thread) overlap the per-token work
 * of the main thread (chunks, frames, socket writes). Started by `ThreadEngine`; speaks `protocol.ts`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger, LOG_LEVELS, type LogLevel } from '@berth/worker';
import { BatchEngine } from '../engine/batch-engine.js';
import { loadModel } from '../load.js';
import { HOLDING, IN_FLIGHT, type FromThread, type ThreadData, type ThreadEvent, type ToThread } from './protocol.js';

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
  // Events of one turn (every row's text of one forward pass, the results it finished) leave in one message. One
  // message is in flight at a time: until the main thread has taken it, the events of later passes wait and leave
  // together, so a busy main thread handles them in one turn (and sends them in one frame per job). The state is
  // shared memory, so a main thread that keeps up costs no message back; only when the thread holds events does
  // the main thread answer `ack`. Each piece of text stays its own event: clients still see one chunk per token.
  const flight = new Int32Array(data.flight);
  let out: ThreadEvent[] = [];
  let scheduled = false;
  let lastPost = 0;
  /** Requests whose first text has been posted (later text may wait for the next message, see `urgent`). */
  const started = new Set<number>();
  /** In `out`: a request's first text or its end, which leave at once. */
  let urgent = false;
  const push = (e: ThreadEvent) => {
    if (e[0] !== 'd' || !started.has(e[1])) urgent = true;
    if (e[0] !== 'd') started.delete(e[1]);
    else started.add(e[1]);
    out.push(e);
    if (!scheduled) {
      scheduled = true;
      queueMicrotask(flush);
    }
  };
  const flush = () => {
    scheduled = false;
    if (out.length === 0) return;
    // A fast model makes a pass every few hundred µs: its text waits (until `minGapMs` after the last message)
    // and leaves with the next passes', so the main thread, the server and the client wake per message, not per
    // token. First text (time to first token) and results leave at once; a slow model posts every pass.
    if (!urgent && performance.now() - lastPost < data.minGapMs) return;
    // IN_FLIGHT -> HOLDING: the main thread has not taken the last message; it will ack when it does.
    const was = Atomics.compareExchange(flight, 0, IN_FLIGHT, HOLDING);
    if (was === IN_FLIGHT || was === HOLDING) return;
    Atomics.store(flight, 0, IN_FLIGHT);
    const events = out;
    out = [];
    urgent = false;
    lastPost = performance.now();
    post({ t: 'events', events });
  };
  const running = new Map<number, AbortController>();
  port.on('message', (m: ToThread) => {
    if (m.t === 'ack') return flush();
    if (m.t === 'cancel') return running.get(m.id)?.abort();
    for (const { id, req } of m.reqs) {
      const ac = new AbortController();
      running.set(id, ac);
      const { stream, ...rest } = req;
      engine
        .generate({ ...rest, signal: ac.signal, ...(stream ? { onDelta: (text) => push(['d', id, text]) } : {}) })
        .then(
          (result) => push(['done', id, result]),
          (err: unknown) => push(['fail', id, err instanceof Error ? err.message : String(err)]),
        )
        .finally(() => running.delete(id));
    }
  });
  post({ t: 'ready', eosTokenIds: loaded.eosTokenIds, contextLength: loaded.contextLength, loadMs: loaded.loadMs });
} catch (err) {
  post({ t: 'loadError', message: err instanceof Error ? err.message : String(err) });
}
