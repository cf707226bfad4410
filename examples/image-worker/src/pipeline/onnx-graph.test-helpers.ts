// Writes minimal ONNX models by hand (protobuf wire format), to test how the pipeline follows a session's declared
// input dtypes without Python or an ONNX export toolchain.

/** ONNX TensorProto.DataType values. */
export const ONNX_TYPES = { float32: 1, int32: 6, int64: 7, float16: 10 } as const;
export type OnnxType = keyof typeof ONNX_TYPES;

export interface GraphValue {
  name: string;
  type: OnnxType;
  /** Numbers are fixed dimensions, strings symbolic ones; `[]` is a scalar. */
  shape: (number | string)[];
}

export interface GraphNode {
  op: string;
  inputs: string[];
  outputs: string[];
}

/** A ModelProto (IR 8, opset 17) with the given inputs, outputs and nodes, and no initializers. */
export function onnxModel(inputs: GraphValue[], outputs: GraphValue[], nodes: GraphNode[]): Uint8Array {
  const graph = concat(
    ...nodes.map((n, i) =>
      field(
        1,
        concat(...n.inputs.map((s) => str(1, s)), ...n.outputs.map((s) => str(2, s)), str(3, `n${i}`), str(4, n.op)),
      ),
    ),
    str(2, 'test-graph'),
    ...inputs.map((v) => field(11, valueInfo(v))),
    ...outputs.map((v) => field(12, valueInfo(v))),
  );
  return concat(
    varintField(1, 8),
    str(2, 'berth-test'),
    field(7, graph),
    field(8, concat(str(1, ''), varintField(2, 17))),
  );
}

function valueInfo(v: GraphValue): Uint8Array {
  const dims = v.shape.map((d) => field(1, typeof d === 'number' ? varintField(1, d) : str(2, d)));
  const tensorType = concat(varintField(1, ONNX_TYPES[v.type]), field(2, concat(...dims)));
  return concat(str(1, v.name), field(2, field(1, tensorType)));
}

function varint(n: number): Uint8Array {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Uint8Array.from(out);
}
const varintField = (no: number, value: number): Uint8Array => concat(varint(no << 3), varint(value));
const field = (no: number, bytes: Uint8Array): Uint8Array => concat(varint((no << 3) | 2), varint(bytes.length), bytes);
const str = (no: number, s: string): Uint8Array => field(no, new TextEncoder().encode(s));

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
