/**
 * Picking the next token from a row of logits: greedy at temperature 0, otherwise softmax with temperature,
 * nucleus (top_p) filtering and a seeded PRNG, so the same seed gives the same text.
 */

/** mulberry32: a small, fast, seedable PRNG returning floats in [0, 1). */
export function createRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SamplingParams {
  /** 0 = greedy. */
  temperature: number;
  /** 0 < top_p <= 1; 1 = no nucleus filtering. */
  topP: number;
  rng: () => number;
}

/** Index of the largest value. */
export function argmax(logits: ArrayLike<number>): number {
  let best = 0;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > max) {
      max = v;
      best = i;
    }
  }
  return best;
}

/** Probabilities below this are left out of nucleus sorting (their total mass is negligible). */
const NUCLEUS_FLOOR = 1e-9;

/** Samples one token id from `logits` (one row, vocabulary-sized). */
export function sampleToken(logits: ArrayLike<number>, p: SamplingParams): number {
  if (p.temperature <= 0) return argmax(logits);
  const n = logits.length;
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (logits[i]! > max) max = logits[i]!;
  const probs = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const e = Math.exp((logits[i]! - max) / p.temperature);
    probs[i] = e;
    sum += e;
  }
  if (p.topP >= 1) {
    let r = p.rng() * sum;
    for (let i = 0; i < n; i++) {
      r -= probs[i]!;
      if (r <= 0) return i;
    }
    return argmax(logits);
  }
  const floor = NUCLEUS_FLOOR * sum;
  const idx: number[] = [];
  for (let i = 0; i < n; i++) if (probs[i]! >= floor) idx.push(i);
  idx.sort((x, y) => probs[y]! - probs[x]!);
  const limit = p.topP * sum;
  let kept = 0;
  let cum = 0;
  while (kept < idx.length && cum < limit) cum += probs[idx[kept++]!]!;
  let r = p.rng() * cum;
  for (let k = 0; k < kept; k++) {
    r -= probs[idx[k]!]!;
    if (r <= 0) return idx[k]!;
  }
  return idx[0]!;
}
