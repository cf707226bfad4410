/** Reconnect delays: `initialMs` doubling per failed attempt up to `maxMs`. */
export interface BackoffOptions {
  initialMs: number;
  maxMs: number;
}

/**
 * Delay before reconnect attempt number `attempt` (0-based): exponential, capped, with "equal jitter" (a random
 * value in the upper half of the interval) so a fleet of workers does not reconnect in lockstep.
 *
 * @example backoffDelay(3, { initialMs: 250, maxMs: 5_000 }) // between 1000 and 2000
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxMs, options.initialMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
