import { readFile } from 'node:fs/promises';
import { adjustSpeech } from '../adjust.js';
import { encodeWav } from '../wav.js';
import type { SpeechEngine, SpeechRequest } from './engine.js';

/** Options of `createTransformersEngine`. */
export interface TransformersEngineOptions {
  /** Hub id (`Xenova/mms-tts-eng`) or local folder of a transformers.js text-to-speech model. */
  model: string;
  /** Speaker embeddings (a file of float32 values, or a URL) for models that need them (SpeechT5, Supertonic). */
  speakerEmbeddings?: string;
  /** Allow downloads from the hub. Default `true`; `false` loads local folders only. */
  allowRemote?: boolean;
  /** Model weights precision. Default `fp32`. */
  dtype?: 'fp32' | 'fp16' | 'q8' | 'q4';
}

interface RawAudioLike {
  audio: Float32Array;
  sampling_rate: number;
}
type Synthesizer = (text: string, options?: Record<string, unknown>) => Promise<RawAudioLike>;

/**
 * Text-to-speech with a neural model through the transformers.js `text-to-speech` pipeline, on CPU. One voice
 * (`default`); `speed` and `pitch` are applied afterwards with ffmpeg (`adjustSpeech`). The model loads on the
 * first job. NOT exercised by this repository's tests: no such model is available offline here.
 *
 * @example createTransformersEngine({ model: 'Xenova/mms-tts-eng' })
 */
export function createTransformersEngine(options: TransformersEngineOptions): SpeechEngine {
  let loading: Promise<{ tts: Synthesizer; speaker?: Float32Array | string }> | undefined;
  const load = () => {
    loading ??= (async () => {
      // Imported on first use: espeak-only workers never load onnxruntime.
      const { env, pipeline } = await import('@huggingface/transformers');
      env.allowRemoteModels = options.allowRemote ?? true;
      env.allowLocalModels = true;
      const tts = (await pipeline('text-to-speech', options.model, { dtype: options.dtype ?? 'fp32' }).catch(
        (err: unknown) => {
          throw new Error(
            `cannot load the text-to-speech model ${options.model}: ${err instanceof Error ? err.message : String(err)}`,
          );
        },
      )) as unknown as Synthesizer;
      const s = options.speakerEmbeddings;
      if (s === undefined) return { tts };
      if (/^https?:/.test(s)) return { tts, speaker: s };
      const b = await readFile(s);
      return { tts, speaker: new Float32Array(b.buffer, b.byteOffset, Math.floor(b.length / 4)) };
    })();
    loading.catch(() => (loading = undefined));
    return loading;
  };
  return {
    name: `transformers.js ${options.model}`,
    defaultVoice: 'default',
    async checkVoice(voice) {
      return voice === 'default'
        ? { ok: true, voice }
        : { ok: false, problem: `this model has one voice, "default" (got "${voice.slice(0, 40)}")` };
    },
    async synthesize(req: SpeechRequest, signal: AbortSignal) {
      const { tts, speaker } = await load();
      signal.throwIfAborted();
      const out = await tts(req.text, speaker !== undefined ? { speaker_embeddings: speaker } : {});
      return adjustSpeech(encodeWav(out.audio, out.sampling_rate), req, signal);
    },
  };
}
