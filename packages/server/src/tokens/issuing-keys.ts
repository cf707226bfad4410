import type { KeyScope } from '../http/guard.js';
import { hashApiKey } from '../keys/key-format.js';
import type { KeyStore } from '../keys/key-store.js';

/** An issuing key as it stands now: the SHA-256 (hex) of its secret and its scope, or why it no longer counts. */
export type IssuingKey = { hash: string; scope: KeyScope } | { gone: string };

/** Ids of stored API keys (`berth_sk_<id>_...`). */
const STORED_KEY_ID_RE = /^[a-z0-9]{12}$/;
/** Ids the server gives the keys of its `apiKeys` option (`BERTH_API_KEY`): `key1`, `key2`, ... in order. */
const PLAIN_KEY_ID_RE = /^key([1-9]\d{0,3})$/;
const ALL: KeyScope = { endpoints: null, readOnly: false };

/**
 * Looks up the API key that issued a job token, each time the token is used: a stored key by its id (revoked or
 * removed: gone), a key of the `apiKeys` option by its position (`key<N>`, as `KeyChecker` names them). The
 * caller compares the hash's fingerprint with the token's and intersects the scope, so a rotated, revoked or
 * narrowed key takes its tokens' rights with it.
 */
export class IssuingKeys {
  private readonly plain: string[];

  constructor(
    apiKeys: readonly string[],
    private readonly keyStore: KeyStore | undefined,
  ) {
    this.plain = apiKeys.map(hashApiKey);
  }

  async get(keyId: string): Promise<IssuingKey> {
    const m = PLAIN_KEY_ID_RE.exec(keyId);
    if (m) {
      const hash = this.plain[Number(m[1]) - 1];
      return hash
        ? { hash, scope: ALL }
        : { gone: `API key ${keyId} that issued this job token is no longer configured` };
    }
    if (this.keyStore && STORED_KEY_ID_RE.test(keyId)) {
      const k = await this.keyStore.get(keyId);
      if (k?.kind !== 'api' || k.revokedAt !== null)
        return { gone: `API key ${keyId} that issued this job token was revoked` };
      return { hash: k.hash, scope: { endpoints: k.endpoints, readOnly: k.readOnly } };
    }
    return { gone: `API key ${keyId} that issued this job token is unknown here` };
  }
}
