import type { Database, Statement } from 'better-sqlite3';
import { RawJson } from '../../core/raw-json.js';
import { BlobJson } from '../../core/blob-json.js';
import type { JobRecord } from '../types.js';

/**
 * Big inputs live in `job_inputs` (schema migration 5), not in the job row: SQLite rewrites a whole row on every
 * UPDATE, overflow pages included, so a 19 MB input kept in `jobs.input` was written again by the claim, the
 * finish and each lease, and read back (and parsed) by every statement returning the job. The row holds '' (never
 * valid JSON, so never a small input) and the input is read only when a caller reads `record.input`.
 */
export const BIG_INPUT_CHARS = 64 * 1024;

export class BigInputs {
  private readonly put: Statement;
  private readonly read: Statement;

  /**
   * `blobDir`: the folder of the store's blob files (issue #35: inputs and outputs of big jobs, streamed to disk),
   * which a column's blob reference names a file of; undefined for a database in memory.
   */
  constructor(
    db: Database,
    readonly blobDir?: string,
  ) {
    this.put = db.prepare('INSERT OR REPLACE INTO job_inputs (job_id, data) VALUES (?, ?)');
    this.read = db.prepare('SELECT data FROM job_inputs WHERE job_id = ?').pluck();
  }

  /**
   * What `jobs.input` gets for `input`: its JSON text, or '' once stored aside. An input kept as the bytes it was
   * sent as (`RawJson`, a big body) is stored as those bytes (a BLOB), never serialized.
   */
  column(id: string, input: unknown): string {
    if (input instanceof BlobJson) return input.marker();
    if (input instanceof RawJson && input.length >= BIG_INPUT_CHARS) {
      this.put.run(id, input.text);
      return '';
    }
    const text = JSON.stringify(input);
    if (text.length < BIG_INPUT_CHARS) return text;
    this.put.run(id, text);
    return '';
  }

  /**
   * Gives `rec` an `input` read from `job_inputs` on first use (then kept): a claim needs it, a finish or a
   * status read does not. Reading it after the job was deleted throws.
   */
  attach(rec: JobRecord): JobRecord {
    let value: Record<string, unknown> | undefined;
    const read = this.read;
    // An input stored as text is parsed; one stored as the bytes of a big body (a BLOB) comes back as it went in,
    // unparsed (`RawJson`): the dispatch splices it into the job.assign frame, a reader that needs its fields
    // parses it (`plainJson`).
    Object.defineProperty(rec, 'input', {
      enumerable: true,
      configurable: true,
      get() {
        if (value === undefined) {
          const text = read.get(rec.id) as string | Buffer | undefined;
          if (text === undefined) throw new Error(`the input of job ${rec.id} is no longer stored`);
          value = (typeof text === 'string' ? JSON.parse(text) : new RawJson(text)) as Record<string, unknown>;
        }
        return value;
      },
      set(v: Record<string, unknown>) {
        value = v;
      },
    });
    return rec;
  }
}
