import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Logger } from '@berth/protocol/log';

import { FILE_NAME_RE as NAME_RE, type FileMeta, type OutputFileStore } from '../store/output-files.js';

export type { FileMeta } from '../store/output-files.js';

export interface FileStoreOptions {
  /** Folder holding the files. Undefined: a fresh temp folder, removed by `close()`. */
  dir: string | undefined;
  /** How long a file lives, ms. */
  ttlMs: number;
  clock: Clock;
  logger: Logger;
}

/**
 * Output files uploaded by workers, on disk: `<dir>/<name>` plus `<dir>/<name>.json` (metadata). An index of
 * expiry times is kept in memory (rebuilt from the metadata files at start), so a sweep costs nothing until the
 * earliest file is due.
 */
export class FileStore implements OutputFileStore {
  private readonly owned: boolean;
  private folder: string | undefined;
  private readonly expiry = new Map<string, number>();
  private earliest = Infinity;

  constructor(private readonly opts: FileStoreOptions) {
    this.owned = opts.dir === undefined;
    if (opts.dir === undefined) return; // a temp folder, made on the first upload
    this.folder = opts.dir;
    mkdirSync(opts.dir, { recursive: true });
    for (const f of readdirSync(opts.dir)) {
      if (!f.endsWith('.json') || !NAME_RE.test(f.slice(0, -5))) continue;
      try {
        const meta = JSON.parse(readFileSync(join(opts.dir, f), 'utf8')) as FileMeta;
        this.track(meta.name, meta.expiresAt);
      } catch {
        // a half-written metadata file: its data file (if any) is left for the operator
      }
    }
  }

  /** The folder (a temp folder is created on first use). */
  get dir(): string {
    this.folder ??= mkdtempSync(join(tmpdir(), 'berth-files-'));
    return this.folder;
  }

  /**
   * The secret signing URLs: kept in `<dir>/.url-secret`, created on first use, so URLs survive restarts on the
   * same folder. A temp folder dies with the process: its secret is random and never written.
   */
  async secret(): Promise<string> {
    return this.secretSync();
  }

  /** `secret()`, synchronously. */
  secretSync(): string {
    if (this.owned) return randomBytes(32).toString('base64url');
    const file = join(this.dir, '.url-secret');
    try {
      const s = readFileSync(file, 'utf8').trim();
      if (s.length >= 32) return s;
    } catch {
      // not there yet
    }
    const s = randomBytes(32).toString('base64url');
    writeFileSync(file, s, { mode: 0o600 });
    return s;
  }

  /** Stores the bytes; answers the metadata (name and expiry). */
  async put(jobId: string, extension: string, contentType: string, data: Uint8Array): Promise<FileMeta> {
    const name = `${randomBytes(16).toString('hex')}.${extension}`;
    const meta: FileMeta = {
      name,
      contentType,
      size: data.byteLength,
      jobId,
      expiresAt: this.opts.clock.now() + this.opts.ttlMs,
    };
    await writeFile(join(this.dir, name), data);
    await writeFile(join(this.dir, `${name}.json`), JSON.stringify(meta));
    this.track(name, meta.expiresAt);
    return meta;
  }

  async stat(name: string): Promise<FileMeta | undefined> {
    if (!NAME_RE.test(name) || this.folder === undefined) return undefined;
    let meta: FileMeta;
    try {
      meta = JSON.parse(await readFile(join(this.dir, `${name}.json`), 'utf8')) as FileMeta;
    } catch {
      return undefined;
    }
    if (meta.expiresAt <= this.opts.clock.now()) {
      await this.remove(name);
      return undefined;
    }
    return meta;
  }

  read(name: string, start: number, end: number): AsyncIterable<Uint8Array> {
    if (end <= start) return (async function* () {})();
    return createReadStream(join(this.dir, name), { start, end: end - 1, highWaterMark: 256 * 1024 });
  }

  /** Deletes files past their expiry; returns how many. Cheap when none is due. */
  async sweep(): Promise<number> {
    const now = this.opts.clock.now();
    if (now < this.earliest) return 0;
    let removed = 0;
    this.earliest = Infinity;
    for (const [name, at] of [...this.expiry]) {
      if (at <= now) {
        await this.remove(name);
        removed++;
      } else this.earliest = Math.min(this.earliest, at);
    }
    if (removed) this.opts.logger.info('expired output files deleted', { removed });
    return removed;
  }

  /** Removes the temp folder if this store created it. */
  close(): void {
    if (this.owned && this.folder !== undefined) rmSync(this.folder, { recursive: true, force: true });
  }

  private track(name: string, at: number): void {
    this.expiry.set(name, at);
    this.earliest = Math.min(this.earliest, at);
  }

  private async remove(name: string): Promise<void> {
    this.expiry.delete(name);
    await rm(join(this.dir, name), { force: true });
    await rm(join(this.dir, `${name}.json`), { force: true });
  }
}
