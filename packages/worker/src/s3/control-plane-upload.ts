import type { OutputTarget } from '../internal/execute/output-target.js';
import { UploadError, type UploadResult } from './types.js';

/**
 * Sends the bytes to the control plane (`PUT <base>/v2/_worker/files/<jobId>?ext=<ext>` with the worker token),
 * which stores them and answers a signed URL valid 7 days.
 */
export async function uploadToControlPlane(
  target: OutputTarget,
  jobId: string,
  data: Uint8Array,
  contentType: string,
  extension: string,
): Promise<UploadResult> {
  const url = `${target.baseUrl}/v2/_worker/files/${encodeURIComponent(jobId)}?ext=${encodeURIComponent(extension)}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'PUT',
      headers: { authorization: `Bearer ${target.token}`, 'content-type': contentType },
      body: data,
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    throw new UploadError(
      'control_plane_upload_failed',
      `upload to the control plane at ${target.baseUrl} failed: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const b = (body ?? {}) as { url?: unknown; expiresAt?: unknown; error?: unknown; code?: unknown };
  if (!res.ok || typeof b.url !== 'string' || typeof b.expiresAt !== 'string') {
    const why =
      typeof b.error === 'string'
        ? `${b.error}${typeof b.code === 'string' ? ` (${b.code})` : ''}`
        : text.slice(0, 200);
    throw new UploadError(
      'control_plane_upload_failed',
      `the control plane refused the upload: HTTP ${res.status}: ${why}`,
    );
  }
  return { url: b.url, expiresAt: b.expiresAt };
}
