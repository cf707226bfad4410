/**
 * The one byte range of a `Range: bytes=...` header as `[start, end)`; undefined for no header, another unit
 * or several ranges (the whole file is served then, as RFC 9110 allows); `'unsatisfiable'` when it starts past
 * the end (416).
 */
export function byteRange(header: string | undefined, size: number): [number, number] | 'unsatisfiable' | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec((header ?? '').trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const n = Number(m[2]); // the last n bytes
    if (n === 0) return 'unsatisfiable';
    return [Math.max(0, size - n), size];
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size : Math.min(size, Number(m[2]) + 1);
  if (start >= size || end <= start) return 'unsatisfiable';
  return [start, end];
}
