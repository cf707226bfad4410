import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { BerthError } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import { OVERLOADED_RETRY_AFTER_S } from '../http/body-budget.js';

/** Which value of a job a blob file holds. */
export type BlobKind = 'in' | 'out';

/** A file still being written (an upload in flight) is left alone by a sweep for this long. */
const TEMP_GRACE_MS = 60 * 60 * 1000;

const TEMP_PREFIX = 'tmp-';

/** A full disk or quota as 507 `insufficient_storage`; any other error as it is. */
export function diskError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return new BerthError('insufficient_storage', 'the server has no disk space left for this value; retry later', {
      reason: code,
    });
  return err;
}

/** The job id a kept blob file belongs to: `<jobId>~<random>.<kind>`; undefined for anything else. */
export function jobOfBlob(name: string): string | undefined {
  if (!name.endsWith('.in') && !name.endsWith('.out')) return undefined;
  const at = name.lastIndexOf('~');
  return at > 0 ? name.slice(0, at) : undefined;
}

/**
 * The store's blob folder (issue #35): big request bodies and worker outputs are streamed into `tmp-*` files,
 * then kept under a name that carries their job's id (`<jobId>~<random>.in|out`), so that a sweep removes the
 * files of deleted jobs (purge, ttl, retention) and of uploads a crash cut short, with no index to keep in step.
 * Bytes on disk are counted against `maxBytes` (a disk budget): past it new uploads are refused with 503
 * `overloaded`; a full disk itself answers 507 `insufficient_storage` (the ingest).
 */
export class BlobFiles {
  private used = 0;
  private readonly sizes = new Map<string, number>();

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
    private readonly logger: Logger,
    /** fsync files and the folder before a job refers to them (durability `full`). */
    readonly fsync = false,
  ) {
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) {
      try {
        const size = statSync(join(dir, name)).size;
        this.sizes.set(name, size);
        this.used += size;
      } catch {
        // removed meanwhile
      }
    }
  }

  /** A new temp file's path, with `size` bytes reserved for it (503 `overloaded` past the disk budget). */
  reserve(size: number): { path: string; name: string } {
    if (this.used + size > this.maxBytes)
      throw new BerthError(
        'overloaded',
        `the server's blob folder holds its limit of ${this.maxBytes} bytes; retry in ${OVERLOADED_RETRY_AFTER_S} s`,
        { limit: this.maxBytes },
      );
    const name = `${TEMP_PREFIX}${randomBytes(12).toString('hex')}`;
    this.used += size;
    this.sizes.set(name, size);
    return { path: join(this.dir, name), name };
  }

  /** A temp file that was not kept: deleted, its reservation given back. */
  async discard(name: string): Promise<void> {
    await unlink(join(this.dir, name)).catch(() => undefined);
    this.forget(name);
  }

  /**
   * Keeps the temp file `temp` (of `size` bytes, written) as a blob of `jobId`: renamed, and with `fsync` the
   * folder synced so the name survives a power loss. Answers the kept name.
   */
  async keep(temp: string, jobId: string, kind: BlobKind, size: number): Promise<string> {
    const name = `${jobId}~${randomBytes(6).toString('hex')}.${kind}`;
    await rename(join(this.dir, temp), join(this.dir, name));
    this.forget(temp);
    this.sizes.set(name, size);
    this.used += size;
    if (this.fsync) {
      const fd = await open(this.dir, 'r');
      try {
        await fd.sync();
      } finally {
        await fd.close();
      }
    }
    return name;
  }

  /** The size of a kept blob file, or undefined when there is none (a worker names one in `job.complete`). */
  async sizeOf(name: string): Promise<number | undefined> {
    try {
      return (await stat(join(this.dir, name))).size;
    } catch {
      return undefined;
    }
  }

  /**
   * Removes the files of jobs the store no longer holds (`exists` answers which of the ids it still has) and temp
   * files older than an hour (all of them with `startup`: no upload survives a restart). Answers how many went.
   */
  async sweep(exists: (jobIds: string[]) => Promise<Set<string>>, startup = false, now = Date.now()): Promise<number> {
    const names = await readdir(this.dir);
    const byJob = new Map<string, string[]>();
    const gone: string[] = [];
    for (const name of names) {
      if (name.startsWith(TEMP_PREFIX)) {
        if (startup) gone.push(name);
        else {
          const st = await stat(join(this.dir, name)).catch(() => undefined);
          if (st && now - st.mtimeMs > TEMP_GRACE_MS) gone.push(name);
        }
        continue;
      }
      const job = jobOfBlob(name);
      if (job === undefined) continue; // not ours: left alone
      const list = byJob.get(job);
      if (list) list.push(name);
      else byJob.set(job, [name]);
    }
    const ids = [...byJob.keys()];
    for (let i = 0; i < ids.length; i += 500) {
      const slice = ids.slice(i, i + 500);
      const held = await exists(slice);
      for (const id of slice) if (!held.has(id)) gone.push(...byJob.get(id)!);
    }
    for (const name of gone) {
      await unlink(join(this.dir, name)).catch(() => undefined);
      this.forget(name);
    }
    if (gone.length > 0) this.logger.debug('blob files removed', { count: gone.length, dir: this.dir });
    return gone.length;
  }

  private forget(name: string): void {
    const size = this.sizes.get(name);
    if (size === undefined) return;
    this.sizes.delete(name);
    this.used = Math.max(0, this.used - size);
  }
}
