/**
 * The q-quantile (0..1) of values counted per bucket (`counts[i]`: values in (bounds[i-1], bounds[i]]; the last slot:
 * above every bound), as Prometheus's `histogram_quantile` estimates it: linear within the bucket, the first
 * bucket starting at 0, the highest finite bound when the rank falls above it. `null` when nothing was counted.
 */
export function bucketQuantile(
  q: number,
  bounds: readonly number[],
  counts: ArrayLike<number>,
  offset = 0,
): number | null {
  let total = 0;
  for (let i = 0; i <= bounds.length; i++) total += counts[offset + i]!;
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < bounds.length; i++) {
    const n = counts[offset + i]!;
    if (seen + n >= rank && n > 0) {
      const lo = i === 0 ? 0 : bounds[i - 1]!;
      return lo + (bounds[i]! - lo) * ((rank - seen) / n);
    }
    seen += n;
  }
  return bounds[bounds.length - 1]!;
}
