import { runProcess } from './run-process.js';

/** Output formats of the text-to-speech worker. */
export const AUDIO_FORMATS = ['wav', 'mp3', 'ogg'] as const;
export type AudioFormat = (typeof AUDIO_FORMATS)[number];

/** MIME type of each format (as the control plane's file store and browsers expect). */
export const AUDIO_CONTENT_TYPES: Record<AudioFormat, string> = {
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
};

/** ffmpeg encoder arguments: MP3 with LAME at 64 kbit/s, Ogg Vorbis at quality 4 (about 64-80 kbit/s for speech). */
const CODECS: Record<Exclude<AudioFormat, 'wav'>, string[]> = {
  mp3: ['-c:a', 'libmp3lame', '-b:a', '64k', '-f', 'mp3'],
  ogg: ['-c:a', 'libvorbis', '-q:a', '4', '-f', 'ogg'],
};

/**
 * Encodes a WAV file as `format` with ffmpeg (`$FFMPEG_BIN`, else `ffmpeg` on the PATH) through pipes; WAV is
 * returned as is. Metadata is stripped (`-map_metadata -1`, `-bitexact`) so equal input gives equal bytes.
 *
 * @example const mp3 = await encodeAudio(wav, 'mp3', job.signal);
 */
export async function encodeAudio(wav: Uint8Array, format: AudioFormat, signal?: AbortSignal): Promise<Uint8Array> {
  if (format === 'wav') return wav;
  const ffmpeg = process.env['FFMPEG_BIN'] ?? 'ffmpeg';
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'wav',
    '-i',
    'pipe:0',
    '-map_metadata',
    '-1',
    '-fflags',
    '+bitexact',
    '-flags:a',
    '+bitexact',
    ...CODECS[format],
    'pipe:1',
  ];
  return new Uint8Array(await runProcess(ffmpeg, args, { stdin: wav, ...(signal ? { signal } : {}) }));
}
