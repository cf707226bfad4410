import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Target } from './s3-target.js';
import { OUTPUT_URL_TTL_SECONDS, UploadError, type UploadResult } from './types.js';

/**
 * Puts the bytes at `<prefix>/<key>` in the bucket and returns a presigned GET URL valid 7 days.
 *
 * @example await uploadToS3(target, 'job-1/ab12.png', bytes, 'image/png')
 */
export async function uploadToS3(
  target: S3Target,
  key: string,
  data: Uint8Array,
  contentType: string,
  now = Date.now(),
): Promise<UploadResult> {
  const client = new S3Client({
    endpoint: target.endpoint,
    region: target.region,
    forcePathStyle: target.forcePathStyle,
    credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
    // Newer SDKs add CRC32 checksums by default; several S3-compatible servers reject them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  const Key = target.prefix ? `${target.prefix}/${key}` : key;
  try {
    await client.send(
      new PutObjectCommand({
        Bucket: target.bucket,
        Key,
        Body: data,
        ContentType: contentType,
        ContentLength: data.byteLength,
      }),
    );
    const url = await getSignedUrl(client, new GetObjectCommand({ Bucket: target.bucket, Key }), {
      expiresIn: OUTPUT_URL_TTL_SECONDS,
    });
    return { url, expiresAt: new Date(now + OUTPUT_URL_TTL_SECONDS * 1000).toISOString() };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new UploadError(
      's3_upload_failed',
      `upload to s3 bucket ${target.bucket} at ${target.endpoint} failed: ${why}`,
      { cause: err },
    );
  } finally {
    client.destroy();
  }
}
