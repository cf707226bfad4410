import { describe, expect, it } from 'vitest';
import { stitch, TILE, tileImages, type RgbImage } from './tiles.js';

function randomImage(width: number, height: number, seed: number): RgbImage {
  const data = new Uint8Array(width * height * 3);
  let s = seed;
  for (let i = 0; i < data.length; i++) data[i] = (s = (s * 1103515245 + 12345) & 0x7fffffff) % 256;
  return { data, width, height };
}

/** A stand-in model: nearest-neighbour x`scale` of each tile, so stitching must give the nearest-neighbour image. */
function nearest(pixels: Float32Array, count: number, scale: number): Float32Array {
  const side = TILE * scale;
  const out = new Float32Array(count * 3 * side * side);
  for (let t = 0; t < count; t++)
    for (let c = 0; c < 3; c++)
      for (let y = 0; y < side; y++)
        for (let x = 0; x < side; x++)
          out[((t * 3 + c) * side + y) * side + x] = pixels[
            ((t * 3 + c) * TILE + Math.floor(y / scale)) * TILE + Math.floor(x / scale)
          ] as number;
  return out;
}

describe('tiles', () => {
  it.each([
    [64, 64],
    [20, 37],
    [65, 64],
    [128, 128],
    [130, 97],
    [300, 71],
  ])(
    'a %ix%i image survives tiling and stitching exactly (every output pixel written once or more, from its tile)',
    (w, h) => {
      const a = randomImage(w, h, w * 31 + h);
      const b = randomImage(17, 90, 5);
      const plan = tileImages([a, b]);
      const [A, B] = stitch(plan, nearest(plan.pixels, plan.count, 2), 2) as [RgbImage, RgbImage];
      for (const [src, big] of [
        [a, A],
        [b, B],
      ] as const) {
        expect([big.width, big.height]).toEqual([src.width * 2, src.height * 2]);
        for (let y = 0; y < big.height; y++)
          for (let x = 0; x < big.width; x++)
            for (let c = 0; c < 3; c++) {
              const want = src.data[((Math.floor(y / 2) * src.width + Math.floor(x / 2)) * 3 + c) as number];
              if (big.data[(y * big.width + x) * 3 + c] !== want) throw new Error(`pixel ${x},${y} differs`);
            }
      }
    },
  );

  it('one tile for an image up to 64x64; overlapping tiles beyond', () => {
    expect(tileImages([randomImage(64, 64, 1)]).count).toBe(1);
    expect(tileImages([randomImage(10, 5, 1)]).count).toBe(1);
    expect(tileImages([randomImage(128, 128, 1)]).count).toBe(9); // origins 0, 48, 64 on each axis
  });
});
