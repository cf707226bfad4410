/** A PCM WAV file's format and sample data. */
export interface WavInfo {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Offset and length of the `data` chunk's samples in the file. */
  dataOffset: number;
  dataBytes: number;
  /** Seconds of audio. */
  duration: number;
}

/**
 * Reads a PCM WAV header. Streamed WAVs (espeak-ng `--stdout`) carry placeholder sizes (0x7fffffff): the `data`
 * chunk then runs to the end of the file.
 *
 * @throws Error when the bytes are not a PCM WAV file.
 * @example readWav(bytes).duration // 1.96
 */
export function readWav(bytes: Uint8Array): WavInfo {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE')
    throw new Error('not a WAV file (no RIFF/WAVE header)');
  let at = 12;
  let fmt: { channels: number; sampleRate: number; bitsPerSample: number } | undefined;
  while (at + 8 <= bytes.length) {
    const id = tag(at);
    const size = view.getUint32(at + 4, true);
    if (id === 'fmt ') {
      if (view.getUint16(at + 8, true) !== 1) throw new Error('not a PCM WAV file');
      fmt = {
        channels: view.getUint16(at + 10, true),
        sampleRate: view.getUint32(at + 12, true),
        bitsPerSample: view.getUint16(at + 22, true),
      };
    } else if (id === 'data') {
      if (!fmt) throw new Error('WAV file without a fmt chunk before its data');
      const dataOffset = at + 8;
      const dataBytes = Math.min(size, bytes.length - dataOffset);
      const frameBytes = (fmt.channels * fmt.bitsPerSample) / 8;
      return { ...fmt, dataOffset, dataBytes, duration: dataBytes / frameBytes / fmt.sampleRate };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error('WAV file without a data chunk');
}

/**
 * The same WAV with its RIFF and `data` sizes set to the real lengths and nothing after the samples (players and
 * browsers reject the placeholder sizes of streamed WAVs).
 */
export function fixWavSizes(bytes: Uint8Array): Uint8Array {
  const info = readWav(bytes);
  const out = bytes.slice(0, info.dataOffset + info.dataBytes);
  const view = new DataView(out.buffer);
  view.setUint32(4, out.length - 8, true);
  view.setUint32(info.dataOffset - 4, info.dataBytes, true);
  return out;
}

/** A mono 16-bit PCM WAV of `samples` (floats in -1..1) at `sampleRate`. */
export function encodeWav(samples: Float32Array, sampleRate: number): Uint8Array {
  const out = new Uint8Array(44 + samples.length * 2);
  const view = new DataView(out.buffer);
  const text = (at: number, s: string) => [...s].forEach((c, i) => (out[at + i] = c.charCodeAt(0)));
  text(0, 'RIFF');
  view.setUint32(4, out.length - 8, true);
  text(8, 'WAVEfmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, 1, true); // mono
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i] as number));
    view.setInt16(44 + i * 2, Math.round(s * 32767), true);
  }
  return out;
}
