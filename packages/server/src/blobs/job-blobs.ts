import { open, writeFile } from 'node:fs/promises';
import { parseJsonBody } from '../http/body.js';
import { RawJson } from '../core/raw-json.js';
import type { JobRecord } from '../store/types.js';
import { diskError, type BlobFiles, type BlobKind } from './blob-files.js';
import { BlobJson } from '../core/blob-json.js';
import type { IngestedBody, ReceivedBody } from './body-ingest.js';

/**
 * Big job values as blob files (issue #35). With a store that keeps blob references (`Store.blobDir`: SQLite on a
 * file), a streamed body's `input` stays in its file and the job row refers to it; with one that keeps values
 * inline (PostgreSQL, memory), the checked bytes are read back once (off the event loop, by the file system's
 * threads) and the temp file removed.
 */
export class JobBlobs {
  constructor(
    readonly files: BlobFiles,
    /** The store keeps blob references (its `blobDir` is `files.dir`). */
    readonly kept: boolean,
  ) {}

  /**
   * The value at `span` of a streamed body (a submit's `input`, a pull worker's `output`): a blob reference, or its
   * bytes. With `owner`, the file is kept at once under that job's name (`kind`: which value of the job it is);
   * else it stays a temp file until `bind` names it.
   */
  async value(body: IngestedBody, span: [number, number], owner?: { jobId: string; kind: BlobKind }): Promise<RawJson> {
    if (this.kept) {
      const name = owner
        ? await this.files.keep(body.temp.name, owner.jobId, owner.kind, body.result.size)
        : body.temp.name;
      return new BlobJson(this.files.dir, name, span[0], span[1]);
    }
    try {
      return new RawJson(await readRange(body.temp.path, span[0], span[1]));
    } finally {
      await this.files.discard(body.temp.name);
    }
  }

  /** A streamed body that did not become a job (refused, or only its fields were wanted): its file goes. */
  async drop(body: IngestedBody): Promise<void> {
    await this.files.discard(body.temp.name);
  }

  /**
   * Before `job` is inserted: an input still in its temp file gets its job's name, so that a sweep keeps it while
   * the job exists and removes it after.
   */
  async bind(job: JobRecord): Promise<void> {
    const input = job.input as unknown;
    if (!(input instanceof BlobJson) || input.dir !== this.files.dir || !input.name.startsWith('tmp-')) return;
    input.name = await this.files.keep(input.name, job.id, 'in', input.end);
  }

  /** An output a worker uploaded (checked JSON), kept as a blob of `jobId`: its name for `job.complete`. */
  async keepOutput(jobId: string, got: ReceivedBody): Promise<{ blob: string; size: number }> {
    let temp: string;
    let size: number;
    if ('small' in got) {
      parseJsonBody(got.small); // checked here; small values are not worth a thread
      const t = this.files.reserve(got.small.length);
      try {
        await writeFile(t.path, got.small);
      } catch (err) {
        await this.files.discard(t.name);
        throw diskError(err);
      }
      [temp, size] = [t.name, got.small.length];
    } else [temp, size] = [got.big.temp.name, got.big.result.size];
    return { blob: await this.files.keep(temp, jobId, 'out', size), size };
  }

  /**
   * The output blob `name` a worker's `job.complete` names, if it is one of `jobId`'s: a blob reference, or (a
   * store that keeps values inline) its bytes, read back once off the event loop and the file removed. Undefined
   * when there is no such file.
   */
  async output(jobId: string, name: string): Promise<RawJson | undefined> {
    if (!name.startsWith(`${jobId}~`) || !name.endsWith('.out') || name.includes('/')) return undefined;
    const size = await this.files.sizeOf(name);
    if (size === undefined) return undefined;
    const blob = new BlobJson(this.files.dir, name, 0, size);
    if (this.kept) return blob;
    try {
      return new RawJson(await readRange(blob.path, 0, size));
    } finally {
      await this.files.discard(name);
    }
  }

  /** A job that was not stored after `bind` (a refused insert, an idempotent replay): its input file goes now. */
  async unbind(job: JobRecord): Promise<void> {
    const input = job.input as unknown;
    if (input instanceof BlobJson && input.dir === this.files.dir) await this.files.discard(input.name);
  }

  private lastSweep = 0;
  private sweeping = false;

  /**
   * `sweep` from the server's periodic sweep: at most every `everyMs` (a sweep lists the folder and looks up each
   * job that has files), never two at once.
   */
  async sweepSometimes(store: { get(id: string): Promise<JobRecord | undefined> }, everyMs = 30_000): Promise<void> {
    const now = Date.now();
    if (this.sweeping || now - this.lastSweep < everyMs) return;
    this.sweeping = true;
    this.lastSweep = now;
    try {
      await this.sweep(store);
    } finally {
      this.sweeping = false;
    }
  }

  /** Removes blob files whose job the store no longer holds (and stale temp files); answers how many. */
  sweep(store: { get(id: string): Promise<JobRecord | undefined> }, startup = false): Promise<number> {
    return this.files.sweep(async (ids) => {
      const held = new Set<string>();
      for (const id of ids) if (await store.get(id)) held.add(id);
      return held;
    }, startup);
  }
}

/** Bytes `[start, end)` of a file. */
export async function readRange(path: string, start: number, end: number): Promise<Buffer> {
  const fd = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(end - start);
    let done = 0;
    while (done < buf.length) {
      const { bytesRead } = await fd.read(buf, done, buf.length - done, start + done);
      if (bytesRead === 0) throw new Error(`${path} is shorter than expected`);
      done += bytesRead;
    }
    return buf;
  } finally {
    await fd.close();
  }
}
