import type { S3Target } from './s3-target.js';
import { OUTPUT_URL_TTL_SECONDS, UploadError, type UploadResult } from './types.js';

type S3Sdk = typeof import('@aws-sdk/client-s3') & typeof import('@aws-sdk/s3-request-presigner');
let sdk: Promise<S3Sdk> | undefined;

/**
 * The AWS SDK is an optional peer dependency of `@berth/worker` (27 of its 30 packages would otherwise land in every
 * worker project): loaded on the first S3 upload; missing, the upload fails with `missing_dependency` saying what
 * to install. Uploads to the control plane or a local folder never load it.
 */
export function loadS3Sdk(
  load?: () => Promise<[typeof import('@aws-sdk/client-s3'), typeof import('@aws-sdk/s3-request-presigner')]>,
): Promise<S3Sdk> {
  if (load) return settle(load());
  sdk ??= settle(Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')]));
  sdk.catch(() => (sdk = undefined)); // a later upload tries again (the package may have been installed since)
  return sdk;
}

function settle(
  loading: Promise<[typeof import('@aws-sdk/client-s3'), typeof import('@aws-sdk/s3-request-presigner')]>,
): Promise<S3Sdk> {
  return loading.then(
    ([client, presigner]) => ({ ...client, ...presigner }),
    (err: unknown) => {
      throw new UploadError(
        'missing_dependency',
        `uploading to S3 needs the AWS SDK, which is not installed (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); run \`npm install @aws-sdk/client-s3 @aws-sdk/s3-request-presigner\`, or upload through the control plane (leave the S3 settings unset)`,
        { cause: err },
      );
    },
  );
}

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
  const { GetObjectCommand, PutObjectCommand, S3Client, getSignedUrl } = await loadS3Sdk();
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
