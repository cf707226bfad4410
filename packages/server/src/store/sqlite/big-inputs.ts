import type { Database, Statement } from 'better-sqlite3';
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

  constructor(db: Database) {
    this.put = db.prepare('INSERT OR REPLACE INTO job_inputs (job_id, data) VALUES (?, ?)');
    this.read = db.prepare('SELECT data FROM job_inputs WHERE job_id = ?').pluck();
  }

  /** What `jobs.input` gets for `text` (the input's JSON): the text itself, or '' once stored aside. */
  column(id: string, text: string): string {
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
    Object.defineProperty(rec, 'input', {
      enumerable: true,
      configurable: true,
      get() {
        if (value === undefined) {
          const text = read.get(rec.id) as string | undefined;
          if (text === undefined) throw new Error(`the input of job ${rec.id} is no longer stored`);
          value = JSON.parse(text) as Record<string, unknown>;
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
