import type { HealthReply } from '@berth/protocol';

type Workers = HealthReply['workers'];

/** What one replica reports about its workers, per endpoint. */
export interface EndpointPresence {
  workers: Workers;
  /** Workers counting towards the rate limit (connected, not draining). */
  limit: number;
  /** Whether its workers stream (undefined: none announced yet). */
  streams?: boolean;
}
export type PresenceSnapshot = Record<string, EndpointPresence>;

/** How long a replica's report counts without a newer one (it reports every 2 s and on every change). */
export const PRESENCE_FRESH_MS = 10_000;

/**
 * The other replicas' workers, as they last reported them over the cluster channel (`wireCluster`): /health,
 * /metrics gauges, the catalog and the rate limit add them to this replica's own, so every replica gives the
 * same answer. A replica that stops reporting (killed) drops out after `PRESENCE_FRESH_MS`; one that closes
 * cleanly says so first.
 */
export class RemotePresence {
  private readonly replicas = new Map<string, { at: number; eps: PresenceSnapshot }>();

  /** A replica's report; `undefined`: it left (closed cleanly). */
  set(replicaId: string, eps: PresenceSnapshot | undefined, now = Date.now()): void {
    if (eps === undefined) this.replicas.delete(replicaId);
    else this.replicas.set(replicaId, { at: now, eps });
  }

  private *fresh(endpointId: string, now: number): Generator<EndpointPresence> {
    for (const [id, r] of this.replicas) {
      if (now - r.at > PRESENCE_FRESH_MS) {
        this.replicas.delete(id);
        continue;
      }
      const e = r.eps[endpointId];
      if (e) yield e;
    }
  }

  /** Adds the others' workers of an endpoint to `w` (in place). */
  addWorkers(endpointId: string, w: Workers, now = Date.now()): Workers {
    for (const e of this.fresh(endpointId, now))
      for (const k of Object.keys(w) as (keyof Workers)[]) w[k] += e.workers[k] ?? 0;
    return w;
  }

  /** The others' workers counting towards the rate limit. */
  limitWorkers(endpointId: string, now = Date.now()): number {
    let n = 0;
    for (const e of this.fresh(endpointId, now)) n += e.limit;
    return n;
  }

  /** Whether the others' workers stream: true if any does, false if some announced and none does. */
  streams(endpointId: string, now = Date.now()): boolean | undefined {
    let out: boolean | undefined;
    for (const e of this.fresh(endpointId, now)) if (e.streams !== undefined) out = out === true || e.streams;
    return out;
  }

  /** Replicas with a fresh report (the rate limit divides by them plus one). */
  count(now = Date.now()): number {
    let n = 0;
    for (const r of this.replicas.values()) if (now - r.at <= PRESENCE_FRESH_MS) n++;
    return n;
  }
}
