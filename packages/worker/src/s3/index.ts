/**
 * `@berth/worker/s3`: output storage for handlers, like RunPod's `rp_upload`.
 *
 * @example
 * import { uploadOutput } from '@berth/worker/s3';
 * const handler = async (job) => {
 *   const png = await render(job.input);
 *   const { url } = await uploadOutput(job, png, { contentType: 'image/png', extension: 'png' });
 *   return { image_url: url };
 * };
 */
import { randomBytes } from 'node:crypto';
import { outputTargetOf } from '../internal/execute/output-target.js';
import { uploadToControlPlane } from './control-plane-upload.js';
import { writeLocalOutput } from './local-output.js';
import { s3TargetOf } from './s3-target.js';
import { uploadToS3 } from './s3-upload.js';
import { UploadError, type UploadOptions, type UploadResult } from './types.js';
import type { S3Config } from '@berth/protocol';

export { OUTPUT_URL_TTL_SECONDS, UploadError, type UploadOptions, type UploadResult } from './types.js';
export { s3TargetOf, type S3Target } from './s3-target.js';

/** The job fields `uploadOutput` reads (any `Job` from a handler fits). */
export interface UploadableJob {
  readonly id: string;
  readonly s3Config?: S3Config;
}

const EXT_RE = /^[a-z0-9]{1,10}$/;
const MIME_RE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;

/**
 * Stores one output file and returns a URL valid 7 days. Where it goes, first match wins:
 *
 * 1. the job's `s3Config` (sent by the client): uploaded to that bucket, presigned GET URL;
 * 2. `BUCKET_ENDPOINT_URL` + `BUCKET_ACCESS_KEY_ID` + `BUCKET_SECRET_ACCESS_KEY` (optional `BUCKET_NAME`,
 *    `BUCKET_REGION`, `BUCKET_OBJECT_PATH`) in the worker's environment: same, to that bucket;
 * 3. the control plane the worker is connected to: it stores the file and answers a signed URL;
 * 4. local mode (`--test-input`, no control plane): a file under `BERTH_OUTPUT_DIR` (default `./berth-outputs`),
 *    returned as a `file://` URL.
 *
 * Keys are `<objectPath>/<jobId>/<random hex>.<extension>`. Throws `UploadError` (with a `code`) on failure, so
 * a handler that lets it propagate fails the job with a clear message.
 *
 * @example const { url, expiresAt } = await uploadOutput(job, bytes, { contentType: 'image/webp', extension: 'webp' });
 */
export async function uploadOutput(
  job: UploadableJob,
  data: Uint8Array,
  options: UploadOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<UploadResult> {
  if (!(data instanceof Uint8Array))
    throw new UploadError('invalid_upload', 'uploadOutput: data must be a Uint8Array (a Buffer is fine)');
  const extension = String(options?.extension ?? '')
    .replace(/^\./, '')
    .toLowerCase();
  if (!EXT_RE.test(extension))
    throw new UploadError(
      'invalid_upload',
      `uploadOutput: extension must be 1-10 letters or digits, like "png" (got ${JSON.stringify(options?.extension)})`,
    );
  const contentType = options?.contentType;
  if (typeof contentType !== 'string' || !MIME_RE.test(contentType)) {
    throw new UploadError(
      'invalid_upload',
      `uploadOutput: contentType must be a MIME type like "image/png" (got ${JSON.stringify(contentType)})`,
    );
  }
  const key = `${safeSegment(job.id)}/${randomBytes(12).toString('hex')}.${extension}`;

  let s3;
  try {
    s3 = s3TargetOf(job.s3Config, env);
  } catch (err) {
    throw new UploadError('invalid_upload', `uploadOutput: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (s3) return uploadToS3(s3, key, data, contentType);

  const target = outputTargetOf(job) ?? envTarget(env);
  if (target) return uploadToControlPlane(target, job.id, data, contentType, extension);

  return writeLocalOutput(env['BERTH_OUTPUT_DIR']?.trim() || 'berth-outputs', key, data);
}

/** A worker started by `berth dev` outside the runtime (e.g. a helper process) still finds its control plane. */
function envTarget(env: NodeJS.ProcessEnv): { baseUrl: string; token: string } | undefined {
  const url = env['BERTH_URL']?.trim();
  const token = env['BERTH_WORKER_TOKEN']?.trim();
  if (!url || !token) return undefined;
  return {
    baseUrl: url
      .replace(/^ws/, 'http')
      .replace(/\/v2\/_worker\/ws$/, '')
      .replace(/\/+$/, ''),
    token,
  };
}

function safeSegment(id: string): string {
  const s = String(id)
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .slice(0, 128);
  return s === '' || s === '.' || s === '..' ? 'job' : s;
}
