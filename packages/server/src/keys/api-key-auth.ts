import { timingSafeEqual } from 'node:crypto';
import { BerthError } from '@berth/protocol';
import { KeyChecker } from '../http/auth.js';
import type { Principal } from '../http/guard.js';
import { hashApiKey, keyIdOf } from './key-format.js';
import type { KeyStore } from './key-store.js';
import { isJobToken } from '../tokens/job-token.js';

/**
 * Authenticates API requests against both kinds of key: plain keys from the `apiKeys` option (`BERTH_API_KEY`,
 * all scopes) and stored keys (`berth_sk_<id>_<secret>`, looked up by the id they carry, their SHA-256 compared
 * in constant time, revoked ones refused). Worker tokens are a separate `KeyChecker` and never pass here.
 */
export class ApiKeyAuth {
  constructor(
    private readonly plain: KeyChecker,
    private readonly store: KeyStore | undefined,
  ) {}

  /**
   * The caller, or 401 `unauthorized`. A plain key is checked without a promise (the proxy's and every queue
   * route's hot path); a stored key (`berth_sk_<id>_<secret>`) is looked up in the store.
   */
  authenticate(header: string | undefined): Principal | Promise<Principal> {
    const secret = KeyChecker.secretOf(header);
    if (!secret) throw new BerthError('unauthorized', 'missing API key: send Authorization: Bearer <key>');
    if (isJobToken(secret))
      throw new BerthError(
        'job_token_not_allowed',
        'a job token is accepted only on the status, status-sync, stream, logs and cancel routes of its job',
      );
    const id = this.store ? keyIdOf(secret) : undefined;
    return id !== undefined && this.store ? this.#stored(this.store, id, secret) : this.#plain(secret);
  }

  async #stored(store: KeyStore, id: string, secret: string): Promise<Principal> {
    const k = await store.get(id);
    if (k && k.kind === 'api' && timingSafeEqual(Buffer.from(k.hash, 'hex'), Buffer.from(hashApiKey(secret), 'hex'))) {
      if (k.revokedAt !== null) throw new BerthError('unauthorized', `API key ${id} was revoked`);
      return { keyId: k.id, scope: { endpoints: k.endpoints, readOnly: k.readOnly } };
    }
    return this.#plain(secret);
  }

  #plain(secret: string): Principal {
    const p = this.plain.match(secret);
    if (!p) throw new BerthError('unauthorized', 'unknown API key');
    return p;
  }
}
