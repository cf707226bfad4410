import sharp from 'sharp';

/** Output formats the workers write. */
export const OUTPUT_FORMATS = ['png', 'webp', 'jpeg'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** MIME type of each output format. */
export const CONTENT_TYPES: Record<OutputFormat, string> = { png: 'image/png', webp: 'image/webp', jpeg: 'image/jpeg' };

/**
 * Encodes raw RGB bytes (`width * height * 3`) as PNG, WebP (quality 90) or JPEG (quality 90). Deterministic:
 * the same pixels give the same bytes.
 *
 * @example const png = await encodeImage({ data, width: 64, height: 64 }, 'png');
 */
export async function encodeImage(
  image: { data: Uint8Array; width: number; height: number; channels?: 3 | 4 },
  format: OutputFormat,
): Promise<Uint8Array> {
  const img = sharp(image.data, { raw: { width: image.width, height: image.height, channels: image.channels ?? 3 } });
  const out = format === 'png' ? img.png() : format === 'webp' ? img.webp({ quality: 90 }) : img.jpeg({ quality: 90 });
  return new Uint8Array(await out.toBuffer());
}
