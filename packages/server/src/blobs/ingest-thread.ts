import { closeSync, fsyncSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { JsonChecker, type JsonCheckOptions } from './json-check.js';
import { JsonCheckError } from './json-errors.js';
import type { FromThread, ToThread, WireError } from './ingest-wire.js';

/**
 * A pool thread (`ingest-pool.ts`): each ingest writes the bytes it is sent to its file and runs the JSON checker
 * on them; a parse checks a whole buffer. Writes are synchronous: the thread has nothing else to do, and the main
 * thread's back-pressure waits for the `written` answers.
 */
interface Ingest {
  fd: number;
  path: string;
  checker: JsonChecker;
  fsync: boolean;
}

const ingests = new Map<number, Ingest>();
const port = parentPort!;
const send = (m: FromThread) => port.postMessage(m);

/** A check failure as it is, a full disk as 507, any other I/O error as 500 with its code. */
function wireError(err: unknown): WireError {
  if (err instanceof JsonCheckError) return { code: err.code, message: err.message, details: err.details };
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return {
      code: 'insufficient_storage',
      message: `the server's disk is full (${code}): the body could not be stored`,
    };
  return { code: 'internal_error', message: `the body could not be stored: ${(err as Error).message}` };
}

function drop(id: number): void {
  const ing = ingests.get(id);
  if (!ing) return;
  ingests.delete(id);
  try {
    closeSync(ing.fd);
  } catch {}
  try {
    unlinkSync(ing.path);
  } catch {}
}

function writeAll(fd: number, b: Uint8Array): void {
  for (let at = 0; at < b.length; ) at += writeSync(fd, b, at, b.length - at);
}

function onMessage(m: ToThread): void {
  if (m.op === 'parse') {
    try {
      const checker = new JsonChecker({ ...m.opts, hash: false });
      checker.push(m.bytes);
      send({ op: 'parsed', id: m.id, result: checker.end() });
    } catch (err) {
      send({ op: 'failed', id: m.id, error: wireError(err) });
    }
    return;
  }
  if (m.op === 'start') {
    try {
      const opts: JsonCheckOptions = { maxOtherBytes: m.maxOtherBytes, maxDepth: m.maxDepth };
      if (m.key !== undefined) opts.key = m.key;
      const fd = openSync(m.path, 'w');
      ingests.set(m.id, { fd, path: m.path, checker: new JsonChecker(opts), fsync: m.fsync });
    } catch (err) {
      send({ op: 'failed', id: m.id, error: wireError(err) });
    }
    return;
  }
  const ing = ingests.get(m.id);
  if (m.op === 'abort') {
    drop(m.id);
    send({ op: 'aborted', id: m.id });
    return;
  }
  if (!ing) return; // failed before: the main thread knows
  try {
    if (m.op === 'write') {
      ing.checker.push(m.chunk);
      writeAll(ing.fd, m.chunk);
      send({ op: 'written', id: m.id, bytes: m.chunk.length });
      return;
    }
    const result = ing.checker.end();
    if (ing.fsync) fsyncSync(ing.fd);
    closeSync(ing.fd);
    ingests.delete(m.id);
    send({ op: 'done', id: m.id, result });
  } catch (err) {
    drop(m.id);
    send({ op: 'failed', id: m.id, error: wireError(err) });
  }
}

port.on('message', onMessage);
