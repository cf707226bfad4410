import type { StreamSlice } from '../types.js';
import type { NoticeLedger } from './notices.js';
import type { Run } from './pg-pools.js';
import { pgStream, type ChunkNotice } from './stream-sql.js';

/**
 * Stream chunks of the PostgreSQL store (`PgStore.appendStream` and friends), on the asynchronously committing
 * pool (`stream-sql.ts`), and the chunk notifications that ride in an append's own statement.
 */
export class PgStreams {
  /**
   * Set by the cluster bus while other replicas listen: the notification of a chunk append, sent in the append's
   * own statement (the chunks reach other replicas one round trip sooner). The bus then skips the event.
   */
  notice: ((id: string, attempt: number, seq: number, chunks: unknown[]) => ChunkNotice | undefined) | undefined;
  constructor(
    private readonly run: Run,
    private readonly noticed: NoticeLedger,
  ) {}

  async append(id: string, attempt: number, seq: number, chunks: unknown[]): Promise<number> {
    const r = await pgStream.append(this.run, id, attempt, seq, chunks, this.notice?.(id, attempt, seq, chunks));
    if (r.notified) this.noticed.add(`s\t${id}\t${attempt}\t${seq}\t${chunks.length}`);
    return r.n;
  }

  /** Whether the append of these chunks notified the other replicas itself (answers true once). */
  takeNoticed(id: string, attempt: number, seq: number, count: number): boolean {
    return this.noticed.take(`s\t${id}\t${attempt}\t${seq}\t${count}`);
  }

  read(id: string, from: number): Promise<StreamSlice | undefined> {
    return pgStream.read(this.run, id, from);
  }

  take(id: string): Promise<unknown[]> {
    return pgStream.take(this.run, id);
  }

  claim(id: string, attempt: number, from: number, to: number): Promise<boolean> {
    return pgStream.claim(this.run, id, from, to, attempt);
  }
}
