/**
 * Seeded standard-normal noise: xoshiro128** seeded through splitmix32, Box-Muller pairs. The same seed gives
 * the same numbers on every platform (only integer ops and IEEE float math), so the same seed gives the same
 * image bytes.
 *
 * @example const latents = gaussianNoise(1 * 4 * 16 * 16, 42);
 */
export function gaussianNoise(length: number, seed: number): Float32Array {
  const next = xoshiro128ss(seed);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i += 2) {
    // u1 in (0, 1], u2 in [0, 1)
    const u1 = (next() + 1) / 4294967296;
    const u2 = next() / 4294967296;
    const r = Math.sqrt(-2 * Math.log(u1));
    out[i] = r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < length) out[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

/** Largest accepted seed (seeds are whole numbers from 0 to 2^53 - 1). */
export const MAX_SEED = Number.MAX_SAFE_INTEGER;

/** A random seed for requests that give none. */
export function randomSeed(): number {
  return Math.floor(Math.random() * 2 ** 32);
}

/** xoshiro128** over 32-bit words; returns unsigned 32-bit integers. */
function xoshiro128ss(seed: number): () => number {
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new RangeError(`seed must be a whole number from 0 to ${MAX_SEED} (got ${seed})`);
  let sm = (seed >>> 0) ^ Math.imul(Math.floor(seed / 4294967296) >>> 0, 0x9e3779b9);
  const splitmix32 = (): number => {
    sm = (sm + 0x9e3779b9) | 0;
    let z = sm;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = splitmix32();
  let b = splitmix32();
  let c = splitmix32();
  let d = splitmix32();
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
