const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export interface ShutdownHandlers {
  /** Runs synchronously on the first SIGINT/SIGTERM (before the promise's continuation). */
  first?: (signal: NodeJS.Signals) => void;
  /** Runs on a second signal: stop waiting, kill everything. */
  force: (signal: NodeJS.Signals) => void;
}

/**
 * Resolves with the first SIGINT or SIGTERM. Returns a disposer that removes the handlers.
 */
export function shutdownSignal(handlers: ShutdownHandlers): { signal: Promise<NodeJS.Signals>; dispose: () => void } {
  let count = 0;
  let resolve!: (s: NodeJS.Signals) => void;
  const signal = new Promise<NodeJS.Signals>((r) => (resolve = r));
  const handler = (s: NodeJS.Signals) => {
    count++;
    if (count === 1) {
      handlers.first?.(s);
      resolve(s);
    } else handlers.force(s);
  };
  for (const s of SIGNALS) process.on(s, handler);
  return { signal, dispose: () => SIGNALS.forEach((s) => process.off(s, handler)) };
}
