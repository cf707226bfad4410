/**
 * Who may scale workers: among control-plane replicas sharing one store, only the holder starts and stops them;
 * the others serve the API and wait. Stores replicas can share offer one (`Store.scalingLease`); a store of one
 * process has none, and that process scales alone (`soleLease`).
 */
export interface ScalingLease {
  /** Whether this process holds the lease now (tries to take it when it does not). */
  held(): Promise<boolean>;
  /** Gives the lease back (another replica takes it at its next look). */
  close(): Promise<void>;
}

/** One process (SQLite or the memory store): always the holder. */
export const soleLease: ScalingLease = { held: async () => true, close: async () => {} };
