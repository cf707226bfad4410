import { createEspeakEngine } from './espeak.js';
import type { SpeechEngine } from './engine.js';
import { createTransformersEngine } from './transformers.js';

/**
 * The engine the environment asks for: `TTS_MODEL` (a transformers.js text-to-speech model: hub id or local
 * folder, with `TTS_SPEAKER_EMBEDDINGS` for models that need them; `BERTH_MODELS_DIR` set or
 * `TTS_ALLOW_REMOTE=0` turn hub downloads off), else espeak-ng (`ESPEAK_NG_BIN`, `TTS_DEFAULT_VOICE`).
 */
export function chooseEngine(processEnv: NodeJS.ProcessEnv = process.env): SpeechEngine {
  const model = processEnv['TTS_MODEL'];
  if (!model)
    return createEspeakEngine(processEnv['TTS_DEFAULT_VOICE'] ? { defaultVoice: processEnv['TTS_DEFAULT_VOICE'] } : {});
  const speaker = processEnv['TTS_SPEAKER_EMBEDDINGS'];
  return createTransformersEngine({
    model,
    ...(speaker ? { speakerEmbeddings: speaker } : {}),
    allowRemote: processEnv['TTS_ALLOW_REMOTE'] !== '0' && !processEnv['BERTH_MODELS_DIR'],
  });
}
