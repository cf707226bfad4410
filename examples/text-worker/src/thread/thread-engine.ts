import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { GenerateRequest, GenerateResult } from '../engine/batch-engine.js';
import { ModelLoadError } from '../load.js';
import type { ResolvedTextWorkerOptions } from '../options.js';
import { HOLDING, IDLE, type FromThread, type ThreadData, type ToThread } from './protocol.js';

interface Waiting {
  onDelta: ((text: string) => void) | undefined;
  resolve(r: GenerateResult): void;
  reject(e: unknown): void;
  unlisten(): void;
}

/**
 * Least time between two messages of the thread that carry only more text of running requests (first text and
 * results leave at once). Bounds the wakeups of a fast model (a pass every few hundred µs) to 500 a second.
 */
export const DEFAULT_MIN_GAP_MS = 2;

/**
 * The engine thread's entry file next to `from` (this module), or undefined when it is not there: a bundle (`berth
 * build` puts the worker in one file) has no separate thread file, and the engine then runs on the main thread.
 */
export function threadEntry(from: string = import.meta.url): URL | undefined {
  const url = new URL('./engine-thread-boot.mjs', from);
  return existsSync(fileURLToPath(url)) ? url : undefined;
}

/** What the model told once loaded in the engine thread. */
export interface ThreadModelInfo {
  eosTokenIds: number[];
  contextLength: number;
  loadMs: number;
}

/**
 * The batching engine in a worker thread (`engine-thread.ts`), with the `generate`/`load` surface of
 * `BatchEngine`: the main thread keeps the job protocol, the thread runs forward passes back to back. Each turn of
 * the thread (one forward pass) arrives as one message carrying every row's new text; while the main thread is
 * busy, the thread holds the events of later passes and sends them together once it has taken the last message
 * (a shared-memory flag says whether it has; `ack` only when the thread is holding).
 */
export class ThreadEngine {
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  /** `events` messages taken from the thread (each one main-thread wakeup). */
  messages = 0;
  private failed: Error | undefined;
  private gens: Extract<ToThread, { t: 'gen' }>['reqs'] = [];

  private constructor(
    private readonly worker: Worker,
    readonly info: ThreadModelInfo,
    private readonly flight: Int32Array,
  ) {
    worker.on('message', (m: FromThread) => {
      if (m.t !== 'events') return;
      this.messages++;
      if (Atomics.exchange(this.flight, 0, IDLE) === HOLDING) this.post({ t: 'ack' });
      this.deliver(m.events);
    });
    const die = (err: Error) => {
      this.failed = err;
      for (const w of this.waiting.values()) w.reject(err);
      this.waiting.clear();
    };
    worker.on('error', die);
    worker.on('exit', (code) => die(new Error(`the engine thread exited (code ${code})`)));
  }

  /** Starts the thread and waits for its model to load; a load failure throws `ModelLoadError`. */
  static async start(
    options: ResolvedTextWorkerOptions,
    logLevel: string,
    tuning: { minGapMs?: number } = {},
  ): Promise<ThreadEngine> {
    const flight = new SharedArrayBuffer(4);
    const workerData: ThreadData = { options, logLevel, flight, minGapMs: tuning.minGapMs ?? DEFAULT_MIN_GAP_MS };
    const entry = threadEntry();
    if (!entry) throw new Error('the engine thread file engine-thread-boot.mjs is not next to thread-engine');
    const worker = new Worker(entry, { workerData });
    const info = await new Promise<ThreadModelInfo>((resolve, reject) => {
      const onExit = (code: number) =>
        reject(new ModelLoadError(`the engine thread exited (code ${code}) while loading`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.once('message', (m: FromThread) => {
        worker.off('error', reject);
        worker.off('exit', onExit);
        if (m.t === 'ready') resolve({ eosTokenIds: m.eosTokenIds, contextLength: m.contextLength, loadMs: m.loadMs });
        else if (m.t === 'loadError') {
          reject(new ModelLoadError(m.message));
          void worker.terminate();
        } else reject(new Error(`unexpected first message ${m.t} from the engine thread`));
      });
    });
    return new ThreadEngine(worker, info, new Int32Array(flight));
  }

  /** Sequences decoding or waiting in the thread (requests not answered yet). */
  get load(): number {
    return this.waiting.size;
  }

  generate(req: GenerateRequest): Promise<GenerateResult> {
    if (this.failed) return Promise.reject(this.failed);
    const { signal, onDelta, ...rest } = req;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const cancel = () => {
        this.postGens(); // the request first, so the thread knows what it cancels
        this.post({ t: 'cancel', id });
      };
      signal?.addEventListener('abort', cancel, { once: true });
      this.waiting.set(id, {
        onDelta,
        resolve,
        reject,
        unlisten: () => signal?.removeEventListener('abort', cancel),
      });
      // Requests of one turn (the assigns read together) cross in one message, so the engine prefills them together.
      if (this.gens.length === 0) setImmediate(() => this.postGens());
      this.gens.push({ id, req: { ...rest, stream: onDelta !== undefined } });
      if (signal?.aborted) cancel();
    });
  }

  /** Stops the thread (pending requests fail). */
  async close(): Promise<void> {
    await this.worker.terminate();
  }

  private postGens(): void {
    const reqs = this.gens;
    if (reqs.length === 0) return;
    this.gens = [];
    this.post({ t: 'gen', reqs });
  }

  private post(m: ToThread): void {
    this.worker.postMessage(m);
  }

  private deliver(events: Extract<FromThread, { t: 'events' }>['events']): void {
    for (const [kind, id, value] of events) {
      const w = this.waiting.get(id);
      if (!w) continue;
      if (kind === 'd') {
        w.onDelta?.(value);
        continue;
      }
      this.waiting.delete(id);
      w.unlisten();
      if (kind === 'done') w.resolve(value);
      else w.reject(new Error(value));
    }
  }
}
