import type { GenerateRequest, GenerateResult } from '../engine/batch-engine.js';
import type { ResolvedTextWorkerOptions } from '../options.js';

/** What the engine thread is started with (`workerData`). */
export interface ThreadData {
  options: ResolvedTextWorkerOptions;
  logLevel: string;
}

/** A request as it crosses to the engine thread (no callbacks, no signal). */
export type ThreadRequest = Omit<GenerateRequest, 'signal' | 'onDelta'> & { stream: boolean };

/** Main thread -> engine thread. */
export type ToThread =
  /** The requests of one main-thread turn, together: the engine prefills them in one pass. */
  | { t: 'gen'; reqs: { id: number; req: ThreadRequest }[] }
  | { t: 'cancel'; id: number }
  /** The last `events` message was delivered: the thread may send the next. */
  | { t: 'ack' };

/** One happening of a request, in order: new text, the result, or the failure. */
export type ThreadEvent =
  | [kind: 'd', id: number, text: string]
  | [kind: 'done', id: number, result: GenerateResult]
  | [kind: 'fail', id: number, message: string];

/** Engine thread -> main thread. */
export type FromThread =
  | { t: 'ready'; eosTokenIds: number[]; contextLength: number; loadMs: number }
  | { t: 'loadError'; message: string }
  /** Everything that happened in one turn of the engine thread (one forward pass: every row's new text). */
  | { t: 'events'; events: ThreadEvent[] };
