import { uploadOutput, type UploadableJob } from '@berth/worker/s3';
import { CONTENT_TYPES, type OutputFormat } from './image/encode.js';

/**
 * Stores an encoded image and returns its URL (valid 7 days). Uses `uploadOutput` from `@berth/worker/s3`: the
 * job's `s3Config`, else `BUCKET_*` environment variables, else the control plane, else (local `--test-input`
 * runs) a file under `BERTH_OUTPUT_DIR`.
 *
 * @example const { url } = await storeImage(job, png, 'png');
 */
export async function storeImage(
  job: UploadableJob,
  bytes: Uint8Array,
  format: OutputFormat,
): Promise<{ url: string; expiresAt: string }> {
  return uploadOutput(job, bytes, { contentType: CONTENT_TYPES[format], extension: format });
}
