import type { Job } from '@berth/worker';
import { uploadOutput } from '@berth/worker/s3';
import { AUDIO_CONTENT_TYPES, encodeAudio, type AudioFormat } from './encode.js';
import type { SpeechEngine } from './engines/engine.js';
import { InputError, parseTtsInput } from './input.js';
import { readWav } from './wav.js';

/** What the handler answers (the control plane adds `cost` on public model slugs). */
export interface TtsOutput {
  /** The audio file, valid 7 days. */
  audio_url: string;
  /** `wav`, `mp3` or `ogg`. */
  format: AudioFormat;
  /** Seconds of speech, 3 decimals. */
  duration: number;
}

/** Options of `createTtsHandler`. */
export interface TtsHandlerOptions {
  engine: SpeechEngine;
  /** Where files go. Default `uploadOutput` from `@berth/worker/s3` (S3, else the control plane, else a local file). */
  store?: (job: Job<unknown>, bytes: Uint8Array, format: AudioFormat) => Promise<{ url: string }>;
}

/**
 * The text-to-speech handler: validates `input` (`text`, `voice`, `speed`, `pitch`, `output_format`), synthesizes
 * with the engine, encodes, stores the file and answers `{ audio_url, format, duration }`. Progress: `synthesize`,
 * then `encode`.
 *
 * @example start({ handler: createTtsHandler({ engine: createEspeakEngine() }) });
 */
export function createTtsHandler(options: TtsHandlerOptions): (job: Job<unknown>) => Promise<TtsOutput> {
  const store =
    options.store ??
    ((job, bytes, format) => uploadOutput(job, bytes, { contentType: AUDIO_CONTENT_TYPES[format], extension: format }));
  const { engine } = options;
  return async (job) => {
    const input = parseTtsInput(job.input);
    const checked = await engine.checkVoice(input.voice ?? engine.defaultVoice);
    if (!checked.ok) throw new InputError([`voice: ${checked.problem}`]);
    const started = performance.now();
    job.progress({ stage: 'synthesize', percent: 0 });
    const wav = await engine.synthesize(
      {
        text: input.text,
        voice: checked.voice,
        ...(checked.engineVoice ? { engineVoice: checked.engineVoice } : {}),
        speed: input.speed,
        pitch: input.pitch,
      },
      job.signal,
    );
    const { duration } = readWav(wav);
    const synthesized = performance.now();
    job.progress({ stage: 'encode', format: input.output_format, percent: 80 });
    const bytes = await encodeAudio(wav, input.output_format, job.signal);
    job.signal.throwIfAborted();
    const { url } = await store(job, bytes, input.output_format);
    job.log.info('speech stored', {
      engine: engine.name,
      voice: checked.voice,
      chars: input.text.length,
      duration: Number(duration.toFixed(3)),
      synthesizeSeconds: Number(((synthesized - started) / 1000).toFixed(3)),
      totalSeconds: Number(((performance.now() - started) / 1000).toFixed(3)),
      bytes: bytes.length,
    });
    return { audio_url: url, format: input.output_format, duration: Number(duration.toFixed(3)) };
  };
}
