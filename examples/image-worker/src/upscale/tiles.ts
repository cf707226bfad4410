/** Side of the square tiles the batched upscaler runs, in input pixels. */
export const TILE = 64;
/** Pixels of context on each inner side of a tile, cut from its output (hides seams between tiles). */
const CONTEXT = 8;

/** An RGB image, 3 bytes per pixel, row by row. */
export interface RgbImage {
  data: Uint8Array | Uint8ClampedArray;
  width: number;
  height: number;
}

/** Where one tile sits in its image, and the part of its output that is kept. */
interface Placement {
  image: number;
  x0: number;
  y0: number;
  /** Kept output region, in input pixels of the image: [x0, x1) x [y0, y1). */
  keep: { x0: number; x1: number; y0: number; y1: number };
}

/** Tiles of several images, ready for one model call per `maxTiles` (`pixels`: [n, 3, TILE, TILE], values 0-1). */
export interface TilePlan {
  count: number;
  pixels: Float32Array;
  placements: Placement[];
  sizes: { width: number; height: number }[];
}

/** Tile origins along one axis: one tile for a side up to TILE (padded), else tiles overlapping by 2 * CONTEXT. */
function origins(size: number): number[] {
  if (size <= TILE) return [0];
  const out: number[] = [];
  for (let s = 0; s + TILE < size; s += TILE - 2 * CONTEXT) out.push(s);
  out.push(size - TILE);
  return out;
}

/** The kept span of tile `i` of `n` starting at `s` along an axis of `size`. */
function kept(s: number, i: number, n: number, size: number): [number, number] {
  return [i === 0 ? 0 : s + CONTEXT, i === n - 1 ? size : s + TILE - CONTEXT];
}

/**
 * Cuts images into TILE x TILE tiles (edges repeated where an image is smaller), all in one float tensor, so tiles
 * of many images run through the model in one call: a batch of jobs becomes one forward pass whatever their sizes.
 *
 * @example const plan = tileImages([a, b]); const out = await model(plan.pixels); const [A, B] = stitch(plan, out, 2);
 */
export function tileImages(images: readonly RgbImage[]): TilePlan {
  const placements: Placement[] = [];
  images.forEach((img, image) => {
    const xs = origins(img.width);
    const ys = origins(img.height);
    ys.forEach((y0, j) => {
      const [ky0, ky1] = kept(y0, j, ys.length, img.height);
      xs.forEach((x0, i) => {
        const [kx0, kx1] = kept(x0, i, xs.length, img.width);
        placements.push({ image, x0, y0, keep: { x0: kx0, x1: kx1, y0: ky0, y1: ky1 } });
      });
    });
  });
  const plane = TILE * TILE;
  const pixels = new Float32Array(placements.length * 3 * plane);
  placements.forEach((p, t) => {
    const img = images[p.image] as RgbImage;
    const base = t * 3 * plane;
    for (let y = 0; y < TILE; y++) {
      const row = Math.min(p.y0 + y, img.height - 1) * img.width;
      for (let x = 0; x < TILE; x++) {
        const src = (row + Math.min(p.x0 + x, img.width - 1)) * 3;
        const dst = base + y * TILE + x;
        pixels[dst] = (img.data[src] as number) / 255;
        pixels[dst + plane] = (img.data[src + 1] as number) / 255;
        pixels[dst + 2 * plane] = (img.data[src + 2] as number) / 255;
      }
    }
  });
  return {
    count: placements.length,
    pixels,
    placements,
    sizes: images.map((i) => ({ width: i.width, height: i.height })),
  };
}

/** Puts the model's outputs of every tile ([n, 3, TILE * scale, TILE * scale], 0-1) back into whole images. */
export function stitch(plan: TilePlan, output: Float32Array, scale: number): RgbImage[] {
  const images = plan.sizes.map(({ width, height }) => ({
    width: width * scale,
    height: height * scale,
    data: new Uint8Array(width * scale * height * scale * 3),
  }));
  const side = TILE * scale;
  const plane = side * side;
  plan.placements.forEach((p, t) => {
    const img = images[p.image] as RgbImage;
    const base = t * 3 * plane;
    for (let y = p.keep.y0 * scale; y < p.keep.y1 * scale; y++) {
      const ty = y - p.y0 * scale;
      for (let x = p.keep.x0 * scale; x < p.keep.x1 * scale; x++) {
        const src = base + ty * side + (x - p.x0 * scale);
        const dst = (y * img.width + x) * 3;
        for (let c = 0; c < 3; c++) {
          const v = output[src + c * plane] as number;
          img.data[dst + c] = Math.round(Math.min(1, Math.max(0, v)) * 255);
        }
      }
    }
  });
  return images;
}
