import { timingSafeEqual } from 'node:crypto';
import { KeyChecker } from '../http/auth.js';
import type { KeyStore } from './key-store.js';
import { hashApiKey } from './key-format.js';
import { workerTokenIdOf } from './worker-token.js';

/** Who a worker is, by the credential it presented: the credential's id (never the secret) and its endpoints. */
export interface WorkerIdentity {
  /** `worker-token<N>` for a shared `BERTH_WORKER_TOKEN`, else the stored worker token's id. */
  credentialId: string;
  /** Endpoints this credential may serve; `null`: any (the shared dev token). */
  endpoints: readonly string[] | null;
}

/**
 * Checks worker credentials, for every way a worker reaches the control plane (the WebSocket, file uploads, pull
 * protocols): shared tokens (`workerTokens`, `BERTH_WORKER_TOKEN`, any endpoint) and stored per-endpoint worker
 * tokens (`berth keys create --worker --endpoint <id>`: `berth_wk_<id>_<secret>`, hashed in the key store,
 * revocable). Stored tokens are read at every check, so a revocation applies to the next connection at once.
 */
export class WorkerAuth {
  private readonly shared: KeyChecker;

  constructor(
    sharedTokens: readonly string[],
    private readonly store: KeyStore | undefined,
  ) {
    this.shared = new KeyChecker([...sharedTokens], 'worker-token');
  }

  /**
   * The identity of `token` (the bare secret or an `Authorization` header value), or null when it is unknown,
   * revoked, or (with `endpoint`) not allowed to serve that endpoint.
   *
   * @example const who = await auth.authenticateWorker(req.headers.authorization, 'echo'); if (!who) return 401;
   */
  async authenticateWorker(token: string | undefined, endpoint?: string): Promise<WorkerIdentity | null> {
    const secret = KeyChecker.secretOf(token);
    if (!secret) return null;
    const identity = (await this.stored(secret)) ?? this.sharedIdentity(secret);
    if (!identity) return null;
    return endpoint === undefined || mayServe(identity, endpoint) ? identity : null;
  }

  private sharedIdentity(secret: string): WorkerIdentity | null {
    const p = this.shared.match(secret);
    return p ? { credentialId: p.keyId, endpoints: null } : null;
  }

  private async stored(secret: string): Promise<WorkerIdentity | null> {
    const id = this.store ? workerTokenIdOf(secret) : undefined;
    if (id === undefined || !this.store) return null;
    const k = await this.store.get(id);
    if (k?.kind !== 'worker' || k.revokedAt !== null) return null;
    if (!timingSafeEqual(Buffer.from(k.hash, 'hex'), Buffer.from(hashApiKey(secret), 'hex'))) return null;
    return { credentialId: k.id, endpoints: k.endpoints };
  }
}

/** Whether a worker with this identity may serve `endpoint`. */
export function mayServe(identity: WorkerIdentity, endpoint: string): boolean {
  return identity.endpoints === null || identity.endpoints.includes(endpoint);
}
