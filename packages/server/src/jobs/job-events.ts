import type { AbortLike } from '../core/abort.js';
import type { ChunkData, JobEventKind } from '../core/job-event-kinds.js';
import type { JobRecord } from '../store/types.js';

type Listener = (kind: JobEventKind, data?: ChunkData, job?: JobRecord) => void;

/**
 * In-process wake-ups keyed by job id, for /runsync, /status-sync and /stream waiters. The store stays the
 * source of truth: a woken waiter re-reads it. (Replicas sharing a store forward these through the store's
 * notification channel.)
 */
export class JobEvents {
  private readonly listeners = new Map<string, Set<Listener>>();

  subscribe(id: string, fn: Listener): () => void {
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (set.size === 0 && this.listeners.get(id) === set) this.listeners.delete(id);
    };
  }

  /** Whether a waiter is subscribed to the job (other replicas' events of other jobs can be dropped unread). */
  has(id: string): boolean {
    return this.listeners.has(id);
  }

  /** Sends to other replicas too (`jobs/wire-cluster.ts`); unset in a single process. */
  forward: ((id: string, kind: JobEventKind, data?: ChunkData, job?: JobRecord) => void) | undefined;

  /** `job`: the record just stored by this change, so local waiters need not read it back. */
  emit(id: string, kind: JobEventKind, data?: ChunkData, job?: JobRecord): void {
    this.emitLocal(id, kind, data, job);
    this.forward?.(id, kind, data, job);
  }

  /** Wakes this process's waiters only (an event another replica forwarded). */
  emitLocal(id: string, kind: JobEventKind, data?: ChunkData, job?: JobRecord): void {
    const set = this.listeners.get(id);
    if (!set) return;
    for (const fn of [...set]) fn(kind, data, job);
  }

  /** Wakes every waiter with a `change` (after events may have been missed): each re-reads the store. */
  wakeAll(): void {
    for (const id of [...this.listeners.keys()]) this.emitLocal(id, 'change');
  }

  /** Number of jobs with at least one waiter (for tests and metrics). */
  get watched(): number {
    return this.listeners.size;
  }
}

/**
 * Resolves on the next event for `id`, after `timeoutMs`, or when `signal` aborts. Subscribe before reading the
 * store (use `arm` then `wait`) so an event between the read and the wait is not missed.
 */
export interface Waiter {
  wait(timeoutMs: number, signal?: AbortLike): Promise<JobEventKind | 'timeout' | 'aborted'>;
  /**
   * The chunk batches carried by the events since the last call, oldest first; `complete` is false when some
   * event since then (a change, a deletion, or a chunk without data) means the reader must read the store.
   */
  takeChunks(): { batches: ChunkData[]; complete: boolean };
  /** The record the latest event carried, if the latest event carried one (otherwise: read the store). */
  takeJob(): JobRecord | undefined;
  dispose(): void;
}

export function armWaiter(events: JobEvents, id: string): Waiter {
  let fired: JobEventKind | undefined;
  let wake: ((k: JobEventKind) => void) | undefined;
  let batches: ChunkData[] = [];
  let complete = true;
  let latest: JobRecord | undefined;
  const unsubscribe = events.subscribe(id, (kind, data, job) => {
    if (kind === 'chunk' && data) batches.push(data);
    else {
      complete = false;
      latest = job;
    }
    if (wake) wake(kind);
    // Coalesced while nobody waits: a 'change' or 'deleted' outranks 'chunk' (a reader woken by 'chunk' may
    // skip re-reading the job's status, so a status change must not hide behind a chunk).
    else if (fired === undefined || fired === 'chunk') fired = kind;
  });
  return {
    takeJob() {
      const j = latest;
      latest = undefined;
      return j;
    },
    takeChunks() {
      const out = { batches, complete };
      batches = [];
      complete = true;
      return out;
    },
    wait(timeoutMs, signal) {
      if (fired) {
        const k = fired;
        fired = undefined;
        return Promise.resolve(k);
      }
      if (signal?.aborted) return Promise.resolve('aborted');
      return new Promise((resolve) => {
        const done = (k: JobEventKind | 'timeout' | 'aborted') => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          wake = undefined;
          resolve(k);
        };
        const onAbort = () => done('aborted');
        const timer = setTimeout(() => done('timeout'), Math.max(0, timeoutMs));
        signal?.addEventListener('abort', onAbort, { once: true });
        wake = done;
      });
    },
    dispose: unsubscribe,
  };
}
