export type KeyKind = 'api' | 'worker';

/** A stored API key or worker token: never the secret, only its SHA-256. */
export interface StoredKey {
  /** Public id (also inside the key): `berth keys revoke <id>`. */
  id: string;
  /** Free-form label. */
  name: string;
  /** SHA-256 of the key, hex. */
  hash: string;
  /** Endpoints the key may use; `null` means all. */
  endpoints: string[] | null;
  /** Only `/status`, `/status-sync`, `/stream`, `/health` (and the webhook log). */
  readOnly: boolean;
  /** `api`: an API key (`berth_sk_`); `worker`: a worker token (`berth_wk_`) for `endpoints` only. */
  kind: KeyKind;
  createdAt: number;
  revokedAt: number | null;
}

/**
 * Where API keys live. Implementations: `MemoryKeyStore` (tests, throwaway runs) and `SqliteKeyStore` (table
 * `api_keys` in `<data-dir>/berth.sqlite`, shared with `berth keys`).
 */
export interface KeyStore {
  insert(key: StoredKey): Promise<void>;
  /** The key with this id, revoked or not. */
  get(id: string): Promise<StoredKey | undefined>;
  /** Every key, oldest first. */
  list(): Promise<StoredKey[]>;
  /** Marks the key revoked; false when there is no such key or it was already revoked. */
  revoke(id: string, now: number): Promise<boolean>;
  close(): Promise<void>;
}

/** A key store for tests and throwaway runs. */
export class MemoryKeyStore implements KeyStore {
  private readonly keys = new Map<string, StoredKey>();

  async insert(key: StoredKey): Promise<void> {
    if (this.keys.has(key.id)) throw new Error(`duplicate key id ${key.id}`);
    this.keys.set(key.id, { ...key, endpoints: key.endpoints && [...key.endpoints] });
  }
  async get(id: string): Promise<StoredKey | undefined> {
    const k = this.keys.get(id);
    return k && { ...k };
  }
  async list(): Promise<StoredKey[]> {
    return [...this.keys.values()].map((k) => ({ ...k }));
  }
  async revoke(id: string, now: number): Promise<boolean> {
    const k = this.keys.get(id);
    if (!k || k.revokedAt !== null) return false;
    k.revokedAt = now;
    return true;
  }
  async close(): Promise<void> {}
}

/** An `api_keys` row as SQLite (read_only 0/1) and PostgreSQL (boolean) return it. */
export interface KeyRow {
  id: string;
  name: string;
  hash: string;
  endpoints: string | null;
  read_only: number | boolean;
  /** Absent in rows of a table created before worker tokens existed. */
  kind?: string | null;
  created_at: number;
  revoked_at: number | null;
}

/** The stored key of a row. */
export const keyFromRow = (r: KeyRow): StoredKey => ({
  id: r.id,
  name: r.name,
  hash: r.hash,
  endpoints: r.endpoints === null ? null : (JSON.parse(r.endpoints) as string[]),
  readOnly: r.read_only === true || r.read_only === 1,
  kind: r.kind === 'worker' ? 'worker' : 'api',
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});
