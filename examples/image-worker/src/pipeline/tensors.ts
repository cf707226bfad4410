import * as ort from 'onnxruntime-node';

/** Element type of a session input, from its metadata (`float32` when the metadata does not say). */
export function inputType(session: ort.InferenceSession, name: string): string {
  const meta = session.inputMetadata.find((m) => m.name === name);
  if (!meta) throw new Error(`the ONNX model has no input "${name}" (inputs: ${session.inputNames.join(', ')})`);
  return meta.isTensor ? meta.type : 'float32';
}

/** Shape of a session input from its metadata (symbolic dimensions are strings). */
export function inputShape(session: ort.InferenceSession, name: string): ReadonlyArray<number | string> {
  const meta = session.inputMetadata.find((m) => m.name === name);
  return meta?.isTensor ? meta.shape : [];
}

/**
 * A tensor of `type` (`float32`, `float16`, `float64`, `int64`, `int32`) holding `values`; float16 values are
 * converted to half-precision bits, integer types rounded.
 *
 * @example const t = toTensor('int64', [951], [1]);
 */
export function toTensor(type: string, values: ArrayLike<number>, dims: readonly number[]): ort.Tensor {
  switch (type) {
    case 'float32':
      return new ort.Tensor('float32', values instanceof Float32Array ? values : Float32Array.from(values), dims);
    case 'float16': {
      const bits = new Uint16Array(values.length);
      for (let i = 0; i < values.length; i++) bits[i] = toHalf(values[i] as number);
      return new ort.Tensor('float16', bits, dims);
    }
    case 'float64':
      return new ort.Tensor('float64', Float64Array.from(values), dims);
    case 'int64':
      return new ort.Tensor('int64', BigInt64Array.from(Array.from(values, (v) => BigInt(Math.round(v)))), dims);
    case 'int32':
      return new ort.Tensor('int32', Int32Array.from(Array.from(values, Math.round)), dims);
    default:
      throw new Error(`unsupported ONNX input type ${type}`);
  }
}

/** A float tensor's values as float32 (float16 bits are widened). */
export function toFloat32(tensor: ort.Tensor): Float32Array {
  const data = tensor.data;
  if (data instanceof Float32Array) return data;
  if (tensor.type === 'float16' && data instanceof Uint16Array) {
    const out = new Float32Array(data.length);
    for (let i = 0; i < data.length; i++) out[i] = fromHalf(data[i] as number);
    return out;
  }
  if (data instanceof Float64Array) return Float32Array.from(data);
  // onnxruntime-node may hand float16 back as a Float16Array where the runtime has one.
  if (tensor.type === 'float16') return Float32Array.from(data as ArrayLike<number>);
  throw new Error(`expected a float tensor, got ${tensor.type}`);
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE 754 half-precision bits of `value` (round to nearest even; overflow to infinity). */
export function toHalf(value: number): number {
  f32[0] = value;
  const x = u32[0] as number;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let half = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && half & 1)) half++;
    return sign | half;
  }
  let half = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && half & 1)) half++;
  return sign | half;
}

/** The number that half-precision `bits` encode. */
export function fromHalf(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >>> 10) & 0x1f;
  const mant = bits & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}
