// Text-to-speech speed and output sizes with espeak-ng (and ffmpeg for mp3/ogg), measured in this run.
// Run: npm run bench -w @berth/example-audio-worker
import { encodeAudio, type AudioFormat } from '../src/encode.js';
import { createEspeakEngine } from '../src/engines/espeak.js';
import { readWav } from '../src/wav.js';

const engine = createEspeakEngine();
const signal = new AbortController().signal;
const sentence = 'The quick brown fox jumps over the lazy dog, and Berth reads it aloud. ';
const time = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t = performance.now();
  const v = await f();
  return [v, (performance.now() - t) / 1000];
};

await engine.synthesize({ text: 'warm up', speed: 1, pitch: 50 }, signal);
console.log('chars  audio_s  synth_s  synth_s_per_audio_s  format  bytes    encode_s  bytes_per_audio_s');
for (const chars of [100, 500, 1000]) {
  const text = sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
  const [wav, synth] = await time(() => engine.synthesize({ text, speed: 1, pitch: 50 }, signal));
  const { duration } = readWav(wav);
  for (const format of ['wav', 'mp3', 'ogg'] as AudioFormat[]) {
    const [bytes, enc] = await time(() => encodeAudio(wav, format, signal));
    console.log(
      [
        chars,
        duration.toFixed(2),
        synth.toFixed(3),
        (synth / duration).toFixed(4),
        format,
        bytes.length,
        enc.toFixed(3),
        Math.round(bytes.length / duration),
      ]
        .map(String)
        .join('  '),
    );
  }
}
