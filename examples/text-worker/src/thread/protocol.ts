import type { GenerateRequest, GenerateResult } from '../engine/batch-engine.js';
import type { ResolvedTextWorkerOptions } from '../options.js';

/** What the engine thread is started with (`workerData`). */
export interface ThreadData {
  options: ResolvedTextWorkerOptions;
  logLevel: string;
  /** `Int32Array` over it: the state of the `events` message in flight (`IDLE`, `IN_FLIGHT`, `HOLDING`). */
  flight: SharedArrayBuffer;
  /** Least time between two `events` messages that carry only more text of running requests. */
  minGapMs: number;
}

/** No `events` message waits for the main thread: the thread may post. */
export const IDLE = 0;
/** An `events` message was posted and the main thread has not taken it yet. */
export const IN_FLIGHT = 1;
/** As `IN_FLIGHT`, and the thread holds newer events: the main thread answers `ack` when it takes the message. */
export const HOLDING = 2;

/** A request as it crosses to the engine thread (no callbacks, no signal). */
export type ThreadRequest = Omit<GenerateRequest, 'signal' | 'onDelta'> & { stream: boolean };

/** Main thread -> engine thread. */
export type ToThread =
  /** The requests of one main-thread turn, together: the engine prefills them in one pass. */
  | { t: 'gen'; reqs: { id: number; req: ThreadRequest }[] }
  | { t: 'cancel'; id: number }
  /** The main thread took an `events` message while the thread was `HOLDING`: send what it holds. */
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
