import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { LIMITS } from '@berth/protocol';
import type { OutputTarget } from '../execute/output-target.js';

/**
 * Big values over HTTP beside the WebSocket (issue #35): a big input is fetched by reference (`job.assign`'s
 * `inputBlob`), a big output is uploaded before `job.complete` names it (`outputBlob`). The control plane streams
 * both between its socket and a file; the WebSocket carries only small frames, so heartbeats and other jobs'
 * messages never wait behind 20 MB.
 */

/** A fetch that did not get the input: the job is handed back (requeued), not failed. */
export class InputFetchError extends Error {}

/**
 * One HTTP exchange with the control plane on node:http (not `fetch`: for a 19 MB body, undici's web streams
 * copied every piece and decoded the text on the way, about 0.25 s of the worker's CPU per transfer in a
 * profile): the answer's status and bytes.
 */
function exchange(
  url: string,
  token: string,
  init: { method: 'GET' | 'POST'; body?: string; signal?: AbortSignal },
): Promise<{ status: number; body: Buffer }> {
  const u = new URL(url);
  const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
    if (init.body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(init.body);
    }
    const req = send(u, { method: init.method, headers, ...(init.signal ? { signal: init.signal } : {}) }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** The input at `ref.url` on the control plane, parsed here. */
export async function fetchInput(
  target: OutputTarget,
  ref: { url: string; size: number },
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  let res: { status: number; body: Buffer };
  try {
    res = await exchange(`${target.baseUrl}${ref.url}`, target.token, { method: 'GET', signal });
  } catch (err) {
    throw new InputFetchError(`could not fetch the job's input: ${(err as Error).message}`);
  }
  if (res.status !== 200) throw new InputFetchError(`could not fetch the job's input: HTTP ${res.status}`);
  return JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
}

/**
 * Uploads `output` when its JSON text passes `LIMITS.blobValueBytes` and the server keeps blobs: answers the
 * blob's name for `job.complete`'s `outputBlob`, or undefined to send the output inline (small, or the upload
 * failed: the frame still carries it, up to the frame limit).
 */
export async function uploadOutput(
  target: OutputTarget,
  id: string,
  attempt: number,
  output: unknown,
): Promise<string | undefined> {
  if (output === null || typeof output !== 'object') return undefined;
  const text = JSON.stringify(output);
  if (text === undefined || text.length < LIMITS.blobValueBytes) return undefined;
  try {
    const url = `${target.baseUrl}/v2/_worker/jobs/${encodeURIComponent(id)}/output?attempt=${attempt}`;
    const res = await exchange(url, target.token, { method: 'POST', body: text });
    if (res.status !== 200) return undefined;
    const body = JSON.parse(res.body.toString('utf8')) as { blob?: unknown };
    return typeof body.blob === 'string' ? body.blob : undefined;
  } catch {
    return undefined;
  }
}
