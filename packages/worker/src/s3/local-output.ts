import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OUTPUT_URL_TTL_SECONDS, UploadError, type UploadResult } from './types.js';

/**
 * Local mode (no control plane, no bucket; e.g. `--test-input`): writes the file under `BERTH_OUTPUT_DIR`
 * (default `./berth-outputs` in the working directory) as `<jobId>/<name>` and returns its `file://` URL, like
 * rp_upload's `simulated_uploaded/` folder. Nothing deletes it; `expiresAt` is nominal (7 days).
 */
export async function writeLocalOutput(
  dir: string,
  key: string,
  data: Uint8Array,
  now = Date.now(),
): Promise<UploadResult> {
  const file = resolve(join(dir, key));
  try {
    await mkdir(resolve(file, '..'), { recursive: true });
    await writeFile(file, data);
  } catch (err) {
    throw new UploadError(
      'local_write_failed',
      `cannot write output file ${file}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return { url: pathToFileURL(file).href, expiresAt: new Date(now + OUTPUT_URL_TTL_SECONDS * 1000).toISOString() };
}
