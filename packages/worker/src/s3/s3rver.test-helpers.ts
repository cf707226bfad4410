import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

/** Credentials s3rver accepts by default. */
export const S3RVER_KEY = 'S3RVER';

/** A real S3-compatible server on 127.0.0.1, a free port, a temp directory, and the given bucket. */
export async function startS3rver(
  bucket: string,
): Promise<{ endpoint: string; [Symbol.asyncDispose](): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'berth-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const addr = (await server.run()) as { address: string; port: number };
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    async [Symbol.asyncDispose]() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
