/** What happened to a job: its record changed, stream chunks arrived, or it was deleted. */
export type JobEventKind = 'change' | 'chunk' | 'deleted';
type Listener = (kind: JobEventKind) => void;

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

  /** Sends to other replicas too (`cluster/wire-cluster.ts`); unset in a single process. */
  forward: ((id: string, kind: JobEventKind) => void) | undefined;

  emit(id: string, kind: JobEventKind): void {
    this.emitLocal(id, kind);
    this.forward?.(id, kind);
  }

  /** Wakes this process's waiters only (an event another replica forwarded). */
  emitLocal(id: string, kind: JobEventKind): void {
    const set = this.listeners.get(id);
    if (!set) return;
    for (const fn of [...set]) fn(kind);
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
export function armWaiter(events: JobEvents, id: string): { wait(timeoutMs: number, signal?: AbortSignal): Promise<JobEventKind | 'timeout' | 'aborted'>; dispose(): void } {
  let fired: JobEventKind | undefined;
  let wake: ((k: JobEventKind) => void) | undefined;
  const unsubscribe = events.subscribe(id, (kind) => {
    if (wake) wake(kind);
    // Coalesced while nobody waits: a 'change' or 'deleted' outranks 'chunk' (a reader woken by 'chunk' may
    // skip re-reading the job's status, so a status change must not hide behind a chunk).
    else if (fired === undefined || fired === 'chunk') fired = kind;
  });
  return {
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
