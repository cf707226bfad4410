import { BerthError } from '@berth/protocol';
import type { Logger } from '@berth/protocol/log';
import type { Clock } from '../clock.js';
import { readBody } from '../http/body.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { Store } from '../store/types.js';
import type { OutputFileStore } from '../store/output-files.js';
import { byteRange } from './byte-range.js';
import type { UrlSigner } from './url-signer.js';

/** Path prefix of signed downloads: `GET /files/<name>?expires=<unix s>&sig=<hmac>` (a route of `http/route-table.ts`). */
const DOWNLOAD_PREFIX = '/files/';

export interface FileRoutesDeps {
  files: OutputFileStore;
  /** Made from the store's secret on first use. */
  signer: () => Promise<UrlSigner>;
  /** Worker credentials: only workers may upload, and only for jobs of an endpoint their credential serves. */
  authorize(header: string | undefined, endpointId?: string): Promise<boolean>;
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Largest upload, bytes. */
  maxBytes: number;
  /** Base of the URLs handed out; undefined: `http://<Host header>`. */
  publicUrl: string | undefined;
}

const EXT_RE = /^[a-z0-9]{1,10}$/;
/** Served inline from the API's origin, so nothing a browser would run (HTML, SVG, JavaScript) is accepted. */
const SERVABLE =
  /^(image\/(png|jpeg|webp|gif|avif|bmp|tiff)|video\/[a-z0-9.+-]+|audio\/[a-z0-9.+-]+|application\/(octet-stream|json|pdf|zip)|text\/plain|model\/[a-z0-9.+-]+)$/;

/** The control plane's output storage routes; their paths are in the route table (`http/route-table.ts`). */
export interface FileRoutes {
  /**
   * `PUT /v2/_worker/files/<jobId>?ext=png` with the worker token, `Content-Type` and the bytes: stores them (the
   * job must be running) and answers `{url, expiresAt, name, size}`.
   */
  upload(req: ApiRequest, jobId: string): Promise<ApiResponse>;
  /**
   * `GET /files/<name>?expires=&sig=`: the bytes with their Content-Type, while the signature is valid and the file
   * has not expired. No API key: the signature is the credential.
   */
  download(req: ApiRequest, name: string): Promise<ApiResponse>;
}

export function createFileRoutes(deps: FileRoutesDeps): FileRoutes {
  return { upload: (req, jobId) => upload(deps, req, jobId), download: (req, name) => download(deps, req, name) };
}

async function upload(deps: FileRoutesDeps, req: ApiRequest, jobId: string): Promise<ApiResponse> {
  if (req.method !== 'PUT' && req.method !== 'POST')
    throw new BerthError('method_not_allowed', `${req.method} is not allowed on worker uploads; use PUT`, [
      'PUT',
      'POST',
    ]);
  const unauthorized = () =>
    new BerthError(
      'unauthorized',
      "uploads need a worker token of the job's endpoint: Authorization: Bearer <BERTH_WORKER_TOKEN>",
    );
  if (!(await deps.authorize(req.headers['authorization']))) throw unauthorized();
  const ext = (req.query.get('ext') ?? '').toLowerCase();
  if (!EXT_RE.test(ext))
    throw new BerthError(
      'invalid_request',
      `?ext= must be 1-10 letters or digits, like png (got ${JSON.stringify(ext)})`,
    );
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (!SERVABLE.test(contentType)) {
    throw new BerthError(
      'unsupported_media_type',
      `Content-Type ${JSON.stringify(contentType)} cannot be stored; use image/png, image/jpeg, image/webp, video/*, audio/*, application/octet-stream, application/json or text/plain`,
    );
  }
  const job = await deps.store.get(jobId);
  if (job?.status !== 'IN_PROGRESS')
    throw new BerthError(
      'job_not_found',
      `job ${jobId.slice(0, 100)} is not running; outputs can only be uploaded while the job runs`,
    );
  if (!(await deps.authorize(req.headers['authorization'], job.endpointId))) throw unauthorized();
  const data = await readBody(req.body, deps.maxBytes, req.headers['content-length']);
  const meta = await deps.files.put(job.id, ext, contentType, data);
  const url = signedUrl(deps, await deps.signer(), req, meta.name, meta.expiresAt);
  deps.logger.info('output file stored', { jobId: job.id, workerId: job.workerId, name: meta.name, size: meta.size });
  return {
    status: 200,
    json: { url, expiresAt: new Date(meta.expiresAt).toISOString(), name: meta.name, size: meta.size },
  };
}

function signedUrl(
  deps: FileRoutesDeps,
  signer: UrlSigner,
  req: ApiRequest,
  name: string,
  expiresAtMs: number,
): string {
  const base = (deps.publicUrl ?? `http://${req.headers['host'] ?? '127.0.0.1'}`).replace(/\/+$/, '');
  const expires = Math.floor(expiresAtMs / 1000);
  return `${base}${DOWNLOAD_PREFIX}${name}?expires=${expires}&sig=${signer.sign(name, expires)}`;
}

async function download(deps: FileRoutesDeps, req: ApiRequest, name: string): Promise<ApiResponse> {
  if (req.method !== 'GET' && req.method !== 'HEAD')
    throw new BerthError('method_not_allowed', `${req.method} is not allowed on files; use GET`, ['GET', 'HEAD']);
  const expiresRaw = req.query.get('expires') ?? '';
  const sig = req.query.get('sig') ?? '';
  const expires = /^\d{1,12}$/.test(expiresRaw) ? Number(expiresRaw) : NaN;
  if (!Number.isSafeInteger(expires) || sig === '' || !(await deps.signer()).verify(name, expires, sig)) {
    throw new BerthError(
      'file_signature_invalid',
      'the file URL is not validly signed (changed or truncated); use the URL exactly as the job output gave it',
    );
  }
  if (expires * 1000 <= deps.clock.now()) {
    throw new BerthError(
      'file_url_expired',
      `the file URL expired at ${new Date(expires * 1000).toISOString()}; output URLs are valid 7 days`,
    );
  }
  const meta = await deps.files.stat(name);
  if (!meta) throw new BerthError('file_not_found', 'the file no longer exists (expired and deleted)');
  const range = byteRange(req.headers['range'], meta.size);
  const headers: Record<string, string> = {
    'content-type': meta.contentType,
    'cache-control': `private, max-age=${Math.max(0, expires - Math.floor(deps.clock.now() / 1000))}`,
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'",
    'accept-ranges': 'bytes',
  };
  if (range === 'unsatisfiable') {
    throw new BerthError(
      'range_not_satisfiable',
      `the Range ${JSON.stringify(req.headers['range'])} is outside the file (${meta.size} bytes)`,
      { size: meta.size },
    );
  }
  const [start, end] = range ?? [0, meta.size];
  if (range) headers['content-range'] = `bytes ${start}-${end - 1}/${meta.size}`;
  // Streamed piece by piece: ten downloads of a large file hold ten pieces, not ten files.
  const stream = req.method === 'HEAD' ? (async function* () {})() : deps.files.read(name, start, end);
  return { status: range ? 206 : 200, headers, stream, length: end - start };
}
