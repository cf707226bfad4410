import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

/** Local-mode outputs (`uploadOutput` without a control plane or bucket) go to a temp folder for the test file. */
export function useTempOutputDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'berth-image-worker-'));
  process.env['BERTH_OUTPUT_DIR'] = dir;
  for (const k of [
    'BUCKET_ENDPOINT_URL',
    'BUCKET_ACCESS_KEY_ID',
    'BUCKET_SECRET_ACCESS_KEY',
    'BERTH_URL',
    'BERTH_WORKER_TOKEN',
  ])
    delete process.env[k];
  return dir;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Peak signal-to-noise ratio of two RGB images of the same size, in dB. */
export function psnr(a: Uint8Array, b: Uint8Array): number {
  let se = 0;
  for (let i = 0; i < a.length; i++) se += ((a[i] as number) - (b[i] as number)) ** 2;
  return 10 * Math.log10((255 * 255) / (se / a.length));
}

/** The bytes behind an output URL: `file://` (local mode) or http(s) (S3 / control plane). */
export async function fetchOutput(url: string): Promise<Uint8Array> {
  if (url.startsWith('file:')) return new Uint8Array(readFileSync(fileURLToPath(url)));
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** A real S3-compatible server (s3rver) on 127.0.0.1, a free port, with one bucket; credentials `S3RVER`. */
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
  const addr = (await server.run()) as { port: number };
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    async [Symbol.asyncDispose]() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
