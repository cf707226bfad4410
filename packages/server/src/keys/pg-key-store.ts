import type { Pool } from 'pg';
import { createPool, toUnavailable, type PgConnectionOptions } from '../store/postgres/connect.js';
import { migrate } from '../store/postgres/schema.js';
import { keyFromRow as fromRow, type KeyRow, type KeyStore, type StoredKey } from './key-store.js';

/**
 * API keys and worker tokens in PostgreSQL (table `api_keys` in Berth's schema, next to the jobs): every replica of a
 * `berth serve` set and `berth keys` see the same keys, and a revocation applies on all replicas at once.
 *
 * @example const keys = await PgKeyStore.open({ url: 'postgres://berth@db/berth' });
 */
export class PgKeyStore implements KeyStore {
  private constructor(
    private readonly pool: Pool,
    private readonly owned: boolean,
  ) {}

  /** Own pool (closed by `close()`); applies Berth's migrations first. */
  static async open(o: PgConnectionOptions): Promise<PgKeyStore> {
    const pool = createPool({ ...o, poolSize: o.poolSize ?? 2 }, () => {});
    try {
      await migrate(pool, o.schema ?? 'berth');
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
    return new PgKeyStore(pool, true);
  }

  /** On the pool of a `PgStore` (migrated already; not closed by `close()`). */
  static on(pool: Pool): PgKeyStore {
    return new PgKeyStore(pool, false);
  }

  async insert(k: StoredKey): Promise<void> {
    try {
      await this.pool.query(
        `INSERT INTO api_keys (id, name, hash, endpoints, read_only, kind, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          k.id,
          k.name,
          k.hash,
          k.endpoints === null ? null : JSON.stringify(k.endpoints),
          k.readOnly,
          k.kind,
          k.createdAt,
          k.revokedAt,
        ],
      );
    } catch (err) {
      if ((err as { code?: string }).code === '23505') throw new Error(`duplicate key id ${k.id}`);
      toUnavailable(err);
    }
  }

  async get(id: string): Promise<StoredKey | undefined> {
    const r = await this.pool.query<KeyRow>(`SELECT * FROM api_keys WHERE id = $1`, [id]).catch(toUnavailable);
    return r.rows[0] && fromRow(r.rows[0]);
  }

  async list(): Promise<StoredKey[]> {
    const r = await this.pool
      .query<KeyRow>(`SELECT * FROM api_keys ORDER BY created_at, id COLLATE "C"`)
      .catch(toUnavailable);
    return r.rows.map(fromRow);
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const r = await this.pool
      .query(`UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, [id, now])
      .catch(toUnavailable);
    return r.rowCount === 1;
  }

  async close(): Promise<void> {
    if (this.owned) await this.pool.end();
  }
}
