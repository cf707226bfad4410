import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS } from '@berth/protocol';
import { RawJson } from './raw-json.js';

/**
 * A column holding this prefix refers to a blob file instead of holding JSON: `\u0000blob:<name>:<start>:<end>`.
 * A NUL byte never starts JSON text, so no stored value can be mistaken for a reference.
 */
const MARK = '\u0000blob:';

/** Bytes read from a blob file at a time when it is streamed into a socket. */
const READ_CHUNK = 1024 * 1024;

/**
 * A big JSON value (a job's `input` or `output`) kept as bytes `[start, end)` of a file in the store's blob folder
 * (issue #35): the request body streamed to disk, or the output a worker uploaded. It travels through the store
 * as a reference (`marker()`); answers and workers get its bytes streamed from the file (`chunks()`), never
 * parsed on the event loop. A reader that needs its fields (`value`, `text`) reads the file synchronously: that
 * is the fallback of rare paths (an OpenAI answer, a model's price), not the path of `/run`, `/status` or a worker.
 */
export class BlobJson extends RawJson {
  constructor(
    /** The blob folder. */
    readonly dir: string,
    /** The file's name in it: `<jobId>~<random>.in` or `.out`. */
    public name: string,
    readonly start: number,
    readonly end: number,
  ) {
    super('');
  }

  /** The file's path. */
  get path(): string {
    return join(this.dir, this.name);
  }

  override get length(): number {
    return this.end - this.start;
  }

  /** The JSON text, read from the file now (a synchronous read: see the class comment). */
  override get text(): Buffer {
    const buf = Buffer.allocUnsafe(this.length);
    const fd = openSync(this.path, 'r');
    try {
      let done = 0;
      while (done < buf.length) {
        const n = readSync(fd, buf, done, buf.length - done, this.start + done);
        if (n === 0) throw new Error(`blob ${this.name} is shorter than its reference`);
        done += n;
      }
    } finally {
      closeSync(fd);
    }
    return buf;
  }

  /** The bytes, a piece at a time from the file (back-pressure is the reader's). */
  override pieces(): AsyncIterable<Uint8Array> {
    if (this.length === 0) return (async function* () {})();
    return createReadStream(this.path, { start: this.start, end: this.end - 1, highWaterMark: READ_CHUNK });
  }

  /** What a store column holds for it. */
  marker(): string {
    return `${MARK}${this.name}:${this.start}:${this.end}`;
  }
}

/** Whether a column's text is a blob reference (`BlobJson.marker()`). */
export const isBlobMarker = (text: string): boolean => text.charCodeAt(0) === 0 && text.startsWith(MARK);

/** The `BlobJson` a column's marker refers to, in the blob folder `dir`. */
export function blobFromMarker(text: string, dir: string | undefined): BlobJson {
  if (dir === undefined) throw new Error('a blob reference was read by a store without a blob folder');
  const parts = text.slice(MARK.length).split(':');
  const end = Number(parts.pop());
  const start = Number(parts.pop());
  return new BlobJson(dir, parts.join(':'), start, end);
}

/**
 * A column's JSON: the blob it refers to; text of `LIMITS.blobValueBytes` or more kept as it is (`RawJson`: a 19 MB input read back by a claim
 * goes into the worker's frame as its bytes, never parsed on the event loop, which took 100 ms and more); small
 * text parsed.
 */
export const readJsonColumn = (text: string, dir?: string): unknown =>
  isBlobMarker(text)
    ? blobFromMarker(text, dir)
    : text.length >= LIMITS.blobValueBytes
      ? new RawJson(text)
      : JSON.parse(text);
