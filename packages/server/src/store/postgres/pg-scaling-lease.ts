import type { ScalingLease } from '../scaling-lease.js';

/** The part of a `pg` pool client the advisory lock needs. */
interface LockClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  release(err?: Error | boolean): void;
  on(event: 'error', fn: (err: Error) => void): unknown;
}

/** How often the holder checks that its connection (and so its lock) is still there. */
const CHECK_MS = 2_000;

/**
 * Replicas on one PostgreSQL database: the lease is a session advisory lock (`pg_try_advisory_lock`) held on one
 * dedicated connection. A replica that dies (even kill -9) closes its connection, PostgreSQL frees the lock, and
 * the next replica to try (every scaler tick) takes it. A holder whose connection fails stops scaling at once.
 */
export class PgScalingLease implements ScalingLease {
  readonly #connect: () => Promise<LockClient>;
  readonly #key: string;
  #client: LockClient | undefined;
  #holding = false;
  #checkedAt = 0;

  /** `key`: what is locked (the schema and the scaler's name), hashed to the lock's number by PostgreSQL. */
  constructor(connect: () => Promise<LockClient>, key: string) {
    this.#connect = connect;
    this.#key = key;
  }

  async held(): Promise<boolean> {
    try {
      if (this.#holding) {
        if (Date.now() - this.#checkedAt < CHECK_MS) return true;
        await this.#client!.query('SELECT 1');
        this.#checkedAt = Date.now();
        return true;
      }
      if (!this.#client) {
        const client = await this.#connect();
        client.on('error', () => this.#drop(client));
        this.#client = client;
      }
      const r = await this.#client.query('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [this.#key]);
      this.#holding = r.rows[0]?.['ok'] === true;
      this.#checkedAt = Date.now();
      return this.#holding;
    } catch {
      if (this.#client) this.#drop(this.#client);
      return false;
    }
  }

  #drop(client: LockClient): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#holding = false;
    client.release(true);
  }

  async close(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    this.#client = undefined;
    if (this.#holding) await client.query('SELECT pg_advisory_unlock(hashtext($1))', [this.#key]).catch(() => {});
    this.#holding = false;
    client.release();
  }
}
