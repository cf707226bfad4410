import sharp, { type OutputInfo } from 'sharp';
import { RawImage } from '@huggingface/transformers';

/** Limits on the `image` input. */
export interface InputImageLimits {
  /** Largest download or decoded base64 payload in bytes. Default 20 MB. */
  maxBytes?: number;
  /** Largest width * height accepted. Default 512 * 512. */
  maxPixels?: number;
  /** Aborts the download. */
  signal?: AbortSignal;
  /** How long a download may take in ms. Default 30 s. */
  timeoutMs?: number;
}

/** Bad `image` input (unreachable URL, not an image, too large): fails the job with this message. */
export class InputImageError extends Error {
  override readonly name = 'InputImageError';
}

/**
 * Reads the `image` input: an `http(s)://` URL (downloaded), a `data:image/...;base64,` URL, or bare base64. Returns
 * the decoded RGB pixels (alpha dropped).
 *
 * @throws InputImageError with a message a client can act on.
 * @example const img = await readInputImage('data:image/png;base64,iVBOR...');
 */
export async function readInputImage(value: string, limits: InputImageLimits = {}): Promise<RawImage> {
  const maxBytes = limits.maxBytes ?? 20 * 1024 * 1024;
  const maxPixels = limits.maxPixels ?? 512 * 512;
  const bytes = /^https?:\/\//i.test(value) ? await download(value, maxBytes, limits) : decodeBase64(value, maxBytes);
  let decoded: { data: Buffer; info: OutputInfo };
  try {
    const meta = await sharp(bytes).metadata();
    if ((meta.width ?? 0) * (meta.height ?? 0) > maxPixels) {
      throw new InputImageError(
        `image is ${meta.width}x${meta.height}, larger than the ${maxPixels} pixels this upscaler accepts`,
      );
    }
    decoded = await sharp(bytes).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  } catch (err) {
    if (err instanceof InputImageError) throw err;
    throw new InputImageError(
      `image could not be decoded (send PNG, JPEG or WebP): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  return new RawImage(new Uint8ClampedArray(decoded.data), decoded.info.width, decoded.info.height, 3);
}

async function download(url: string, maxBytes: number, limits: InputImageLimits): Promise<Uint8Array> {
  const signals = [AbortSignal.timeout(limits.timeoutMs ?? 30_000), ...(limits.signal ? [limits.signal] : [])];
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.any(signals), redirect: 'follow' });
  } catch (err) {
    limits.signal?.throwIfAborted();
    throw new InputImageError(`image URL could not be fetched: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!res.ok) throw new InputImageError(`image URL answered HTTP ${res.status}`);
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > maxBytes) throw new InputImageError(`image is ${length} bytes, more than ${maxBytes}`);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body ?? []) {
    total += chunk.length;
    if (total > maxBytes) throw new InputImageError(`image is more than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function decodeBase64(value: string, maxBytes: number): Uint8Array {
  const match = /^data:([^;,]*)(;base64)?,/i.exec(value);
  if (match && !match[2])
    throw new InputImageError('image data URL must be base64-encoded (data:image/png;base64,...)');
  const payload = (match ? value.slice(match[0].length) : value).replace(/\s+/g, '');
  if (payload.length === 0 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(payload)) {
    throw new InputImageError('image must be an http(s) URL, a data: URL or base64 data');
  }
  if ((payload.length * 3) / 4 > maxBytes) throw new InputImageError(`image is more than ${maxBytes} bytes`);
  return Buffer.from(payload, payload.includes('-') || payload.includes('_') ? 'base64url' : 'base64');
}
