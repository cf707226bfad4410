/**
 * Spherical linear interpolation between two noise vectors at `t` in 0..1. Keeps the norm of Gaussian noise (a
 * straight lerp halfway between two independent draws has ~0.71 of their norm, which diffusion models turn into
 * washed-out images). Nearly parallel vectors fall back to lerp.
 *
 * @example const noise = slerp(gaussianNoise(n, 1), gaussianNoise(n, 2), 0.5);
 */
export function slerp(a: Float32Array, b: Float32Array, t: number): Float32Array {
  if (a.length !== b.length) throw new RangeError(`slerp: lengths differ (${a.length} and ${b.length})`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  const cos = dot / (Math.sqrt(na * nb) || 1);
  if (Math.abs(cos) > 0.9995) return lerp(a, b, t);
  const theta = Math.acos(cos);
  const s = Math.sin(theta);
  const wa = Math.sin((1 - t) * theta) / s;
  const wb = Math.sin(t * theta) / s;
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = wa * (a[i] as number) + wb * (b[i] as number);
  return out;
}

/** Linear interpolation `a + t (b - a)`, element-wise (text embeddings between two prompts). */
export function lerp(a: Float32Array, b: Float32Array, t: number): Float32Array {
  if (a.length !== b.length) throw new RangeError(`lerp: lengths differ (${a.length} and ${b.length})`);
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) + t * ((b[i] as number) - (a[i] as number));
  return out;
}

/** `t` of frame `i` of `n` (0 for the first, 1 for the last). */
export const frameT = (i: number, n: number): number => (n <= 1 ? 0 : i / (n - 1));
