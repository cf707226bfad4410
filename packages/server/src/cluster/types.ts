import type { CancelMessage } from '@berth/protocol';
import type { ChunkData, JobEventKind } from '../core/job-event-kinds.js';
import type { PresenceSnapshot } from './presence.js';
import type { JobRecord } from '../store/records.js';

/** What one control-plane replica tells the others. */
export type ClusterMessage =
  /**
   * A job changed, got stream chunks or was deleted: waiters (/runsync, /status-sync, /stream) re-read the store.
   * Chunks travel with their event when they fit in a notification (`data`): stream readers need no read then;
   * so does a terminal record (`job`): /runsync and /status-sync waiters answer it without reading it.
   */
  | { t: 'job'; id: string; kind: JobEventKind; data?: ChunkData; job?: JobRecord }
  /** Jobs were queued on an endpoint: a replica with an idle worker for it claims them. */
  | { t: 'queued'; endpointId: string }
  /** A replica's workers per endpoint (every 2 s and on change); without `eps`: the replica is leaving. */
  | { t: 'presence'; replica: string; eps?: PresenceSnapshot }
  /** Stop an attempt (cancel, timeout, ttl): the replica its worker is connected to tells the worker. */
  | { t: 'stop'; id: string; attempt: number; workerId: string; reason: CancelMessage['reason'] };

/**
 * The channel between control-plane replicas that share one store. Messages are wake-ups, never state: the store
 * stays the source of truth, so a lost message costs latency (the periodic pump and sweep catch up), not data.
 * Memory and SQLite stores run one process and need none; PostgreSQL uses LISTEN/NOTIFY (`PgClusterBus`).
 */
export interface ClusterBus {
  /** This replica's id (messages it sent are not delivered back to it). */
  readonly replicaId: string;
  /** Sends to every other replica (batched; best effort). */
  publish(msg: ClusterMessage): void;
  /**
   * Set by `wireCluster`: whether this replica has waiters for a job. A bus may drop other replicas' events of
   * jobs nobody here waits for before decoding them (`PgClusterBus` does).
   */
  interestedIn?: ((jobId: string) => boolean) | undefined;
  /** Messages from other replicas. */
  onMessage(fn: (msg: ClusterMessage) => void): void;
  /** Called after the channel came back from an outage, when messages may have been missed. */
  onResync(fn: () => void): void;
  /** Connects (resolves once listening). */
  start(): Promise<void>;
  close(): Promise<void>;
}
