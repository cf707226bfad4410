/** Metadata of a stored output file. */
export interface FileMeta {
  /** `<random hex>.<ext>`: the last segment of `/files/<name>`. */
  name: string;
  contentType: string;
  size: number;
  jobId: string;
  /** Epoch ms after which the file is deleted and its URL refused. */
  expiresAt: number;
}

/** Names the stores accept (anything else is unknown). */
export const FILE_NAME_RE = /^[0-9a-f]{32}\.[a-z0-9]{1,10}$/;

/**
 * Where output files of workers without S3 live: on disk (`FileStore`, one control plane) or in PostgreSQL
 * (`PgFileStore`, every replica reads every file). Downloads are streamed: a reader holds one piece at a time,
 * never the whole file.
 */
export interface OutputFileStore {
  /** The secret signing URLs, the same for every process reading this store (kept in the store). */
  secret(): Promise<string>;
  /** Stores the bytes; answers the metadata (name and expiry). */
  put(jobId: string, extension: string, contentType: string, data: Uint8Array): Promise<FileMeta>;
  /** The metadata, or undefined when unknown or expired (an expired file is deleted now). */
  stat(name: string): Promise<FileMeta | undefined>;
  /** Bytes `[start, end)` of a file `stat` found, piece by piece. */
  read(name: string, start: number, end: number): AsyncIterable<Uint8Array>;
  /** Deletes files past their expiry; returns how many. */
  sweep(): Promise<number>;
  close(): void | Promise<void>;
}
