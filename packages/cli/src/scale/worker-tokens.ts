import { randomBytes } from 'node:crypto';
import { createApiKey, type KeyStore, type StoredKey } from '@berth/server';

/** The id inside a stored worker token (`berth_wk_<id>_<secret>`: the server's `workerTokenIdOf`). */
const TOKEN_ID_RE = /^berth_wk_([a-z0-9]{12})_/;

/**
 * The worker tokens of `berth serve --scale`: one stored token per (deployment, endpoint), named
 * `berth serve --scale <name>: <endpoint> (deployment <id>)`. The key store holds only their hashes, so the
 * token a start reuses is read from the containers that carry it; tokens no container uses are revoked. The
 * deployment id is stored in those names: every start on the same data (SQLite folder, PostgreSQL schema) finds it.
 */
export class WorkerTokens {
  readonly #keys: KeyStore;
  readonly #scaleName: string;
  /** The id this process makes up when the store names none yet (its tokens then name it). */
  readonly #fresh = randomBytes(4).toString('hex');
  #deployment: string | undefined;

  constructor(keys: KeyStore, scaleName: string) {
    this.#keys = keys;
    this.#scaleName = scaleName;
  }

  /**
   * The deployment of this scale name on this key store: the one its tokens name, else a new id. Read again by
   * each new holder of the scaling lease, so that a replica taking over uses the id the first holder stored.
   */
  async deployment(): Promise<string> {
    const prefix = `berth serve --scale ${this.#scaleName}: `;
    let found: string | undefined;
    for (const k of await this.#keys.list()) {
      const m = / \(deployment ([a-f0-9]{8})\)$/.exec(k.name);
      if (k.kind === 'worker' && k.name.startsWith(prefix) && m) found = m[1]; // the newest one wins
    }
    this.#deployment = found ?? this.#fresh;
    return this.#deployment;
  }

  #name(endpointId: string): string {
    return `berth serve --scale ${this.#scaleName}: ${endpointId} (deployment ${this.#deployment ?? this.#fresh})`;
  }

  /** Tokens of this endpoint's containers from this deployment, and from starts before deployments had ids. */
  #ours(k: StoredKey, endpointId: string): boolean {
    return (
      k.kind === 'worker' &&
      k.revokedAt === null &&
      (k.name === this.#name(endpointId) || k.name === `berth serve --scale ${this.#scaleName}: ${endpointId}`)
    );
  }

  /**
   * The token new containers of the endpoint get: one that `inUse` (the tokens its containers carry) holds and
   * the store still accepts, else a new one. Tokens of this deployment and endpoint that no container carries
   * are revoked: one start after another leaves one token per endpoint.
   */
  async settle(endpointId: string, inUse: readonly string[]): Promise<{ token: string; revoked: number }> {
    const ours = (await this.#keys.list()).filter((k) => this.#ours(k, endpointId));
    const ids = new Set(ours.map((k) => k.id));
    const carried = new Map<string, string>();
    for (const secret of inUse) {
      const id = TOKEN_ID_RE.exec(secret)?.[1];
      if (id !== undefined && ids.has(id)) carried.set(id, secret);
    }
    let token = [...carried.values()][0];
    if (token === undefined) {
      token = (await createApiKey(this.#keys, { worker: true, endpoints: [endpointId], name: this.#name(endpointId) }))
        .secret;
    }
    let revoked = 0;
    for (const k of ours) if (!carried.has(k.id) && (await this.#keys.revoke(k.id, Date.now()))) revoked++;
    return { token, revoked };
  }
}
