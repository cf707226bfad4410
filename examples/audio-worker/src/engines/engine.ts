/** One text-to-speech request, already validated. */
export interface SpeechRequest {
  text: string;
  /** Voice name as `checkVoice` answered it; undefined: the engine's default. */
  voice?: string;
  /** The engine's own name for the voice (`checkVoice`'s `engineVoice`), when it differs. */
  engineVoice?: string;
  /** Speaking rate multiplier, 0.5-2 (1 = normal). */
  speed: number;
  /** espeak-ng pitch, 0-99 (50 = normal). */
  pitch: number;
}

/** A speech synthesizer the handler can run. */
export interface SpeechEngine {
  /** Shown in logs, e.g. `espeak-ng 1.51`. */
  readonly name: string;
  /** The voice used when the request names none. */
  readonly defaultVoice: string;
  /**
   * The canonical name of `voice`, or an error message listing some valid names when the engine does not have it.
   */
  checkVoice(
    voice: string,
  ): Promise<{ ok: true; voice: string; engineVoice?: string } | { ok: false; problem: string }>;
  /** Synthesizes `request` as a PCM WAV file (correct header sizes). */
  synthesize(request: SpeechRequest, signal: AbortSignal): Promise<Uint8Array>;
}
