/** What `uploadOutput` needs to know about the bytes. */
export interface UploadOptions {
  /** MIME type stored with the object and served back, e.g. `image/png`. */
  contentType: string;
  /** File extension without the dot (1-10 of a-z 0-9), e.g. `png`; the key is `<jobId>/<random>.<extension>`. */
  extension: string;
}

/** Where the output went. */
export interface UploadResult {
  /** A URL anyone can GET without credentials until `expiresAt` (presigned S3 URL, signed control-plane URL, or a local `file://` URL). */
  url: string;
  /** ISO 8601 time after which the URL stops working (7 days after the upload). */
  expiresAt: string;
}

/** How long output URLs stay valid: 7 days (the longest a SigV4 presigned URL can live). */
export const OUTPUT_URL_TTL_SECONDS = 7 * 24 * 3600;

/** An upload that could not be done: bad arguments, bucket errors, or the control plane refused it. */
export class UploadError extends Error {
  override readonly name = 'UploadError';
  /** A stable code: `invalid_upload`, `s3_upload_failed`, `missing_dependency` (the AWS SDK for an S3 upload),
   * `control_plane_upload_failed`, `local_write_failed`. */
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
