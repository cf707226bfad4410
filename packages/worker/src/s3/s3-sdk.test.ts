import { describe, expect, it } from 'vitest';
import { loadS3Sdk } from './s3-upload.js';
import { UploadError } from './types.js';

describe('the AWS SDK is an optional peer dependency', () => {
  it('missing: the upload fails with missing_dependency naming the packages to install', async () => {
    const cause = new Error("Cannot find package '@aws-sdk/client-s3' imported from /app/worker.mjs\nmore");
    const err = await loadS3Sdk(() => Promise.reject(cause)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UploadError);
    expect((err as UploadError).code).toBe('missing_dependency');
    expect((err as UploadError).message).toContain(
      "(Cannot find package '@aws-sdk/client-s3' imported from /app/worker.mjs)",
    );
    expect((err as UploadError).message).toContain('npm install @aws-sdk/client-s3 @aws-sdk/s3-request-presigner');
    expect((err as UploadError).cause).toBe(cause);
  });

  it('installed (a devDependency here): loaded on first use, with the client and the presigner', async () => {
    const sdk = await loadS3Sdk();
    expect(typeof sdk.S3Client).toBe('function');
    expect(typeof sdk.getSignedUrl).toBe('function');
    expect(await loadS3Sdk()).toBe(sdk);
  });
});
