import { randomBytes } from 'node:crypto';
import type { Pool } from 'pg';
import type { Clock } from '../../clock.js';
import { FILE_NAME_RE, type FileMeta, type OutputFileStore } from '../output-files.js';
import type { Logger } from '@berth/protocol/log';
import { toUnavailable } from './connect.js';

/** Bytes per stored piece: a download or a Range reads only the pieces it needs, `PIECES_PER_READ` at a time. */
const PIECE = 256 * 1024;
const PIECES_PER_READ = 4;

interface MetaRow {
  name: string;
  content_type: string;
  size: number;
  job_id: string;
  expires_at: number;
}
const toMeta = (r: MetaRow): FileMeta => ({
  name: r.name,
  contentType: r.content_type,
  size: r.size,
  jobId: r.job_id,
  expiresAt: r.expires_at,
});

/**
 * Output files in PostgreSQL (tables `output_files` and `output_file_pieces`), so every replica serves every
 * signed URL. A file is written in one transaction (its row appears with all its bytes); downloads read
 * `PIECES_PER_READ` pieces per statement as the client takes them. The URL-signing secret is a row of
 * `settings`, created by the first replica that needs it. Any replica's sweep deletes expired files.
 */
export class PgFileStore implements OutputFileStore {
  private secretText: Promise<string> | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly opts: { ttlMs: number; clock: Clock; logger: Logger },
  ) {}

  secret(): Promise<string> {
    this.secretText ??= (async () => {
      await this.pool.query(
        `INSERT INTO settings (name, value) VALUES ('files_url_secret', $1) ON CONFLICT (name) DO NOTHING`,
        [randomBytes(32).toString('base64url')],
      );
      const r = await this.pool.query<{ value: string }>(`SELECT value FROM settings WHERE name = 'files_url_secret'`);
      return r.rows[0]!.value;
    })().catch((err) => {
      this.secretText = undefined;
      return toUnavailable(err);
    });
    return this.secretText;
  }

  async put(jobId: string, extension: string, contentType: string, data: Uint8Array): Promise<FileMeta> {
    const name = `${randomBytes(16).toString('hex')}.${extension}`;
    const meta: FileMeta = {
      name,
      contentType,
      size: data.byteLength,
      jobId,
      expiresAt: this.opts.clock.now() + this.opts.ttlMs,
    };
    const c = await this.pool.connect().catch(toUnavailable);
    let broken: Error | undefined;
    const onError = (err: Error) => (broken = err);
    c.on('error', onError);
    try {
      await c.query('BEGIN');
      const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      for (let i = 0, off = 0; off < buf.length || i === 0; i++, off += PIECE) {
        await c.query(`INSERT INTO output_file_pieces (name, idx, data) VALUES ($1, $2, $3)`, [
          name,
          i,
          buf.subarray(off, off + PIECE),
        ]);
      }
      await c.query(
        `INSERT INTO output_files (name, content_type, size, job_id, expires_at) VALUES ($1, $2, $3, $4, $5)`,
        [name, contentType, meta.size, jobId, meta.expiresAt],
      );
      await c.query('COMMIT');
      return meta;
    } catch (err) {
      await c.query('ROLLBACK').catch((e: Error) => (broken = e));
      return toUnavailable(err);
    } finally {
      c.off('error', onError);
      c.release(broken);
    }
  }

  async stat(name: string): Promise<FileMeta | undefined> {
    if (!FILE_NAME_RE.test(name)) return undefined;
    const r = await this.pool.query<MetaRow>(`SELECT * FROM output_files WHERE name = $1`, [name]).catch(toUnavailable);
    const row = r.rows[0];
    if (!row) return undefined;
    if (row.expires_at <= this.opts.clock.now()) {
      await this.remove([name]);
      return undefined;
    }
    return toMeta(row);
  }

  async *read(name: string, start: number, end: number): AsyncIterable<Uint8Array> {
    if (end <= start) return;
    const last = Math.floor((end - 1) / PIECE);
    for (let idx = Math.floor(start / PIECE); idx <= last; idx += PIECES_PER_READ) {
      const r = await this.pool
        .query<{ idx: number; data: Buffer }>(
          `SELECT idx, data FROM output_file_pieces WHERE name = $1 AND idx BETWEEN $2 AND $3 ORDER BY idx`,
          [name, idx, Math.min(last, idx + PIECES_PER_READ - 1)],
        )
        .catch(toUnavailable);
      for (const p of r.rows) {
        const base = p.idx * PIECE;
        yield p.data.subarray(Math.max(0, start - base), Math.min(p.data.length, end - base));
      }
    }
  }

  async sweep(): Promise<number> {
    const r = await this.pool
      .query<{ name: string }>(`SELECT name FROM output_files WHERE expires_at <= $1 LIMIT 1000`, [
        this.opts.clock.now(),
      ])
      .catch(toUnavailable);
    const names = r.rows.map((x) => x.name);
    if (names.length) {
      await this.remove(names);
      this.opts.logger.info('expired output files deleted', { removed: names.length });
    }
    return names.length;
  }

  close(): void {}

  private async remove(names: string[]): Promise<void> {
    await this.pool
      .query(
        `WITH f AS (DELETE FROM output_files WHERE name = ANY($1)) DELETE FROM output_file_pieces WHERE name = ANY($1)`,
        [names],
      )
      .catch(toUnavailable);
  }
}
