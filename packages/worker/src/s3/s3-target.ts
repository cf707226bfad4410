import type { S3Config } from '@berth/protocol';

/** A resolved bucket: where to upload and with which credentials. */
export interface S3Target {
  /** Endpoint given to the S3 client (no bucket in it). */
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Key prefix, without leading or trailing slash (`s3Config.objectPath`, `BUCKET_OBJECT_PATH`). */
  prefix: string;
  /** Path-style addressing (`endpoint/bucket/key`): every non-AWS endpoint (MinIO, R2, s3rver...). */
  forcePathStyle: boolean;
}

/**
 * The bucket of a job: its `s3Config` first, else the worker's environment (`BUCKET_ENDPOINT_URL`,
 * `BUCKET_ACCESS_KEY_ID`, `BUCKET_SECRET_ACCESS_KEY`, optional `BUCKET_NAME`, `BUCKET_REGION`,
 * `BUCKET_OBJECT_PATH`). Returns undefined when neither is set.
 *
 * Without a bucket name, it is taken from the endpoint URL like RunPod's rp_upload: the first path segment
 * (`http://minio:9000/outputs`) or else the first host label (`https://outputs.s3.us-east-1.amazonaws.com`).
 *
 * @example s3TargetOf(job.s3Config, process.env)?.bucket
 */
export function s3TargetOf(cfg: S3Config | undefined, env: NodeJS.ProcessEnv): S3Target | undefined {
  if (cfg) {
    return build(cfg.endpointUrl, cfg.accessId, cfg.accessSecret, cfg.bucketName, cfg.objectPath, env['BUCKET_REGION']);
  }
  const endpointUrl = value(env['BUCKET_ENDPOINT_URL']);
  const accessKeyId = value(env['BUCKET_ACCESS_KEY_ID']);
  const secret = value(env['BUCKET_SECRET_ACCESS_KEY']);
  if (endpointUrl === undefined && accessKeyId === undefined && secret === undefined) return undefined;
  if (endpointUrl === undefined || accessKeyId === undefined || secret === undefined) {
    const missing = [
      ['BUCKET_ENDPOINT_URL', endpointUrl],
      ['BUCKET_ACCESS_KEY_ID', accessKeyId],
      ['BUCKET_SECRET_ACCESS_KEY', secret],
    ]
      .filter(([, v]) => v === undefined)
      .map(([k]) => k);
    throw new Error(
      `S3 output storage is half configured: set ${missing.join(' and ')} too, or unset the BUCKET_* variables`,
    );
  }
  return build(
    endpointUrl,
    accessKeyId,
    secret,
    value(env['BUCKET_NAME']),
    value(env['BUCKET_OBJECT_PATH']),
    env['BUCKET_REGION'],
  );
}

function build(
  endpointUrl: string,
  accessKeyId: string,
  secretAccessKey: string,
  bucketName: string | undefined,
  objectPath: string | undefined,
  regionEnv: string | undefined,
): S3Target {
  let u: URL;
  try {
    u = new URL(endpointUrl);
  } catch {
    throw new Error(`S3 endpoint URL must be an http(s) URL (got ${JSON.stringify(endpointUrl)})`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`S3 endpoint URL must be an http(s) URL (got ${JSON.stringify(endpointUrl)})`);
  const aws = /(^|\.)amazonaws\.com$/.test(u.hostname);
  const segments = u.pathname.split('/').filter(Boolean);
  let bucket = bucketName;
  let endpoint = u.origin;
  if (bucket === undefined && segments[0] !== undefined) bucket = segments[0];
  else if (bucket === undefined) {
    const [label, ...rest] = u.hostname.split('.');
    if (!label || rest.length === 0)
      throw new Error(
        `no bucket name: set BUCKET_NAME (or s3Config.bucketName), or put it in the endpoint URL (${endpointUrl})`,
      );
    bucket = label;
    endpoint = `${u.protocol}//${rest.join('.')}${u.port ? `:${u.port}` : ''}`;
  }
  const region = value(regionEnv) ?? /\.s3[.-]([a-z0-9-]+)\.amazonaws\.com$/.exec(u.hostname)?.[1] ?? 'us-east-1';
  const prefix = (objectPath ?? '').replace(/^\/+|\/+$/g, '');
  return { endpoint, region, bucket, accessKeyId, secretAccessKey, prefix, forcePathStyle: !aws };
}

function value(v: string | undefined): string | undefined {
  const t = v?.trim();
  return t === undefined || t === '' ? undefined : t;
}
