import { runProcess } from './run-process.js';
import { fixWavSizes, readWav } from './wav.js';

/** Largest pitch shift, semitones, at `pitch` 0 or 99 (50 = unchanged). */
export const MAX_SEMITONES = 4;

/**
 * Changes the speed and pitch of a WAV with ffmpeg filters, for engines that cannot do it themselves (neural
 * models): `asetrate` + `aresample` shift the pitch by up to +/-4 semitones (`pitch` 0-99, 50 unchanged), `atempo`
 * sets the tempo (`speed` 0.5-2) without changing the pitch. Speed 1 and pitch 50 return the input unchanged.
 *
 * @example const faster = await adjustSpeech(wav, { speed: 1.5, pitch: 50 });
 */
export async function adjustSpeech(
  wav: Uint8Array,
  { speed, pitch }: { speed: number; pitch: number },
  signal?: AbortSignal,
): Promise<Uint8Array> {
  if (speed === 1 && pitch === 50) return wav;
  const { sampleRate } = readWav(wav);
  const factor = 2 ** ((((pitch - 50) / 50) * MAX_SEMITONES) / 12);
  const filters: string[] = [];
  if (factor !== 1) filters.push(`asetrate=${Math.round(sampleRate * factor)}`, `aresample=${sampleRate}`);
  // asetrate made it `factor` times faster; atempo takes 0.5..100 per instance, so chain two for lower values.
  const tempo = speed / factor;
  if (tempo < 0.5) filters.push(`atempo=${Math.sqrt(tempo)}`, `atempo=${Math.sqrt(tempo)}`);
  else if (tempo !== 1) filters.push(`atempo=${tempo}`);
  const ffmpeg = process.env['FFMPEG_BIN'] ?? 'ffmpeg';
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'wav',
    '-i',
    'pipe:0',
    '-af',
    filters.join(','),
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    '-c:a',
    'pcm_s16le',
    '-f',
    'wav',
    'pipe:1',
  ];
  return fixWavSizes(new Uint8Array(await runProcess(ffmpeg, args, { stdin: wav, ...(signal ? { signal } : {}) })));
}
