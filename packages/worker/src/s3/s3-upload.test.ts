import { describe, expect, it } from 'vitest';
import { uploadOutput, UploadError } from './index.js';
import { s3TargetOf } from './s3-target.js';
import { S3RVER_KEY, startS3rver } from './s3rver.test-helpers.js';

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 255);

describe('uploadOutput to a real S3-compatible server (s3rver)', () => {
  it('uploads with the job s3Config and returns a presigned URL valid 7 days that serves the same bytes', async () => {
    await using s3 = await startS3rver('outputs');
    const data = bytes(70_000);
    const job = {
      id: 'job-123-u1',
      s3Config: {
        accessId: S3RVER_KEY,
        accessSecret: S3RVER_KEY,
        bucketName: 'outputs',
        endpointUrl: s3.endpoint,
        objectPath: 'run/',
      },
    };
    const before = Date.now();
    const out = await uploadOutput(job, data, { contentType: 'image/png', extension: 'png' }, {});
    const u = new URL(out.url);
    expect(u.origin).toBe(s3.endpoint);
    expect(u.pathname).toMatch(/^\/outputs\/run\/job-123-u1\/[0-9a-f]{24}\.png$/);
    expect(u.searchParams.get('X-Amz-Expires')).toBe(String(7 * 24 * 3600));
    const exp = Date.parse(out.expiresAt) - before;
    expect(exp).toBeGreaterThanOrEqual(7 * 24 * 3600_000 - 1000);
    expect(exp).toBeLessThanOrEqual(7 * 24 * 3600_000 + 5000);
    const res = await fetch(out.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(data))).toBe(true);
  });

  it('uploads with BUCKET_* environment variables (bucket taken from the endpoint path) and two uploads get distinct keys', async () => {
    await using s3 = await startS3rver('envbucket');
    const env = {
      BUCKET_ENDPOINT_URL: `${s3.endpoint}/envbucket`,
      BUCKET_ACCESS_KEY_ID: S3RVER_KEY,
      BUCKET_SECRET_ACCESS_KEY: S3RVER_KEY,
    };
    const a = await uploadOutput({ id: 'j1' }, bytes(10), { contentType: 'image/webp', extension: 'webp' }, env);
    const b = await uploadOutput({ id: 'j1' }, bytes(20), { contentType: 'image/webp', extension: 'webp' }, env);
    expect(a.url).not.toBe(b.url);
    expect(new URL(a.url).pathname).toMatch(/^\/envbucket\/j1\/[0-9a-f]{24}\.webp$/);
    const got = Buffer.from(await (await fetch(b.url)).arrayBuffer());
    expect(got.equals(Buffer.from(bytes(20)))).toBe(true);
  });

  // s3rver checks the access key id but not SigV4 signatures, so the refused credential is the key id.
  it('an unknown access key fails with s3_upload_failed naming the bucket', async () => {
    await using s3 = await startS3rver('outputs');
    const job = {
      id: 'j2',
      s3Config: { accessId: 'NOT-A-KEY', accessSecret: 'wrong', bucketName: 'outputs', endpointUrl: s3.endpoint },
    };
    const err = await uploadOutput(job, bytes(5), { contentType: 'image/png', extension: 'png' }, {}).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UploadError);
    expect((err as UploadError).code).toBe('s3_upload_failed');
    expect((err as UploadError).message).toContain('outputs');
  });
});

describe('s3TargetOf', () => {
  it('takes the bucket from the first host label like rp_upload, and the region from an AWS host', () => {
    const t = s3TargetOf(undefined, {
      BUCKET_ENDPOINT_URL: 'https://pics.s3.eu-west-3.amazonaws.com',
      BUCKET_ACCESS_KEY_ID: 'a',
      BUCKET_SECRET_ACCESS_KEY: 'b',
    });
    expect(t).toMatchObject({
      bucket: 'pics',
      endpoint: 'https://s3.eu-west-3.amazonaws.com',
      region: 'eu-west-3',
      forcePathStyle: false,
    });
  });
  it('BUCKET_NAME wins; non-AWS endpoints use path style', () => {
    const t = s3TargetOf(undefined, {
      BUCKET_ENDPOINT_URL: 'http://minio:9000',
      BUCKET_NAME: 'b1',
      BUCKET_ACCESS_KEY_ID: 'a',
      BUCKET_SECRET_ACCESS_KEY: 'b',
      BUCKET_REGION: 'auto',
    });
    expect(t).toMatchObject({
      bucket: 'b1',
      endpoint: 'http://minio:9000',
      region: 'auto',
      forcePathStyle: true,
      prefix: '',
    });
  });
  it('no variables: no bucket; half of them: an error naming the missing ones', () => {
    expect(s3TargetOf(undefined, {})).toBeUndefined();
    expect(() => s3TargetOf(undefined, { BUCKET_ENDPOINT_URL: 'http://x:1/b' })).toThrow(
      /BUCKET_ACCESS_KEY_ID and BUCKET_SECRET_ACCESS_KEY/,
    );
  });
});
