/** Promises that resolve when a condition over mutable state becomes true; `notify()` re-checks them. */
export interface Waiters {
  until(condition: () => boolean): Promise<void>;
  notify(): void;
  /** Drops pending waits (they never resolve). */
  clear(): void;
}

/**
 * Creates a set of condition waiters.
 *
 * @example const w = createWaiters(); const idle = w.until(() => jobs.size === 0); jobs.clear(); w.notify();
 */
export function createWaiters(): Waiters {
  const pending = new Set<() => void>();
  return {
    until(condition) {
      if (condition()) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const check = (): void => {
          if (!condition()) return;
          pending.delete(check);
          resolve();
        };
        pending.add(check);
      });
    },
    notify() {
      if (pending.size === 0) return;
      for (const check of [...pending]) check();
    },
    clear() {
      pending.clear();
    },
  };
}

/** Waits for `promise` or `ms`, whichever comes first, and clears the timer. Resolves true if the promise won. */
export async function raceTimeout(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
