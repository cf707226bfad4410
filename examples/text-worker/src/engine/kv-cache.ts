import { Tensor } from '@huggingface/transformers';

/**
 * The shared key/value cache of a batch of sequences of different lengths, left-padded to one length:
 * tensors `[batch, heads, length, headDim]` by input name, plus one attention-mask row per sequence (0 = padding).
 */
export interface BatchCache {
  tensors: Record<string, Tensor>;
  /** One row per sequence, all of the cache's length. */
  mask: Uint8Array[];
  length: number;
}

type Typed = Float32Array | Uint16Array | Float64Array | Int32Array;

function alloc(like: Tensor, size: number): Typed {
  const Ctor = (like.data as Typed).constructor as new (n: number) => Typed;
  return new Ctor(size);
}

/**
 * A new cache holding, in order, the chosen `rows` of each source (source index, row index), left-padded to the
 * longest real content among them. Leading columns that are padding in every row are dropped.
 */
export function gatherRows(sources: readonly BatchCache[], rows: readonly [number, number][]): BatchCache | undefined {
  if (rows.length === 0) return undefined;
  // Real length of each picked row = its length minus its leading padding.
  const lens = rows.map(([s, r]) => {
    const m = sources[s]!.mask[r]!;
    let lead = 0;
    while (lead < m.length && m[lead] === 0) lead++;
    return m.length - lead;
  });
  const length = Math.max(...lens);
  const names = Object.keys(sources[rows[0]![0]]!.tensors);
  const tensors: Record<string, Tensor> = {};
  for (const name of names) {
    const first = sources[rows[0]![0]]!.tensors[name]!;
    const [, heads, , dim] = first.dims as [number, number, number, number];
    const out = alloc(first, rows.length * heads * length * dim);
    rows.forEach(([s, r], b) => {
      const src = sources[s]!.tensors[name]!;
      const srcLen = src.dims[2]!;
      const data = src.data as Typed;
      const n = lens[b]!;
      for (let h = 0; h < heads; h++) {
        const from = ((r * heads + h) * srcLen + (srcLen - n)) * dim;
        const to = ((b * heads + h) * length + (length - n)) * dim;
        out.set(data.subarray(from, from + n * dim), to);
      }
    });
    tensors[name] = new Tensor(first.type, out as never, [rows.length, heads, length, dim]);
  }
  const mask = rows.map(([s, r], b) => {
    const m = new Uint8Array(length);
    const src = sources[s]!.mask[r]!;
    m.set(src.subarray(src.length - lens[b]!), length - lens[b]!);
    return m;
  });
  return { tensors, mask, length };
}

/** The attention mask as an int64 tensor `[batch, length + extra]`, with `extra` trailing ones. */
export function maskTensor(mask: readonly Uint8Array[], length: number, extra: number): Tensor {
  const width = length + extra;
  const data = new BigInt64Array(mask.length * width);
  mask.forEach((row, b) => {
    for (let i = 0; i < length; i++) data[b * width + i] = BigInt(row[i]!);
    for (let i = length; i < width; i++) data[b * width + i] = 1n;
  });
  return new Tensor('int64', data, [mask.length, width]);
}
