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

/** The input at `ref.url` on the control plane, parsed here. */
export async function fetchInput(
  target: OutputTarget,
  ref: { url: string; size: number },
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(`${target.baseUrl}${ref.url}`, {
      headers: { authorization: `Bearer ${target.token}` },
      signal,
    });
  } catch (err) {
    throw new InputFetchError(`could not fetch the job's input: ${(err as Error).message}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new InputFetchError(`could not fetch the job's input: HTTP ${res.status}`);
  }
  const text = await res.text();
  return JSON.parse(text) as Record<string, unknown>;
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
    const res = await fetch(`${target.baseUrl}/v2/_worker/jobs/${encodeURIComponent(id)}/output?attempt=${attempt}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
      body: text,
    });
    if (!res.ok) {
      await res.body?.cancel();
      return undefined;
    }
    const body = (await res.json()) as { blob?: unknown };
    return typeof body.blob === 'string' ? body.blob : undefined;
  } catch {
    return undefined;
  }
}
