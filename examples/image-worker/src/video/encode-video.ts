import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import type { RgbImage } from '../pipeline/generate.js';

/** Output formats of the video worker: H.264 MP4 (ffmpeg) or animated WebP (sharp). */
export const VIDEO_FORMATS = ['mp4', 'webp'] as const;
export type VideoFormat = (typeof VIDEO_FORMATS)[number];
export const VIDEO_CONTENT_TYPES: Record<VideoFormat, string> = { mp4: 'video/mp4', webp: 'image/webp' };

/**
 * Encodes equally sized RGB frames as a clip at `fps` frames per second: `frames.length / fps` seconds long.
 *
 * - mp4: ffmpeg (`$FFMPEG_BIN`, else `ffmpeg`), H.264 (libx264, yuv420p, CRF 18, `+faststart` so browsers start
 *   playing before the end arrives), constant frame rate, no audio, metadata stripped. Width and height must be even.
 * - webp: sharp, lossy quality 90, looping forever, per-frame delays summing to `round(n * 1000 / fps)` ms.
 *
 * @example const mp4 = await encodeVideo(frames, 8, 'mp4');
 */
export async function encodeVideo(
  frames: readonly RgbImage[],
  fps: number,
  format: VideoFormat,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  const first = frames[0];
  if (!first) throw new RangeError('a clip needs at least one frame');
  const { width, height } = first;
  if (frames.some((f) => f.width !== width || f.height !== height))
    throw new RangeError('all frames must have the same size');
  const joined = new Uint8Array(width * height * 3 * frames.length);
  frames.forEach((f, i) => joined.set(f.data, i * width * height * 3));
  if (format === 'webp') {
    const delay = frames.map((_, i) => Math.round(((i + 1) * 1000) / fps) - Math.round((i * 1000) / fps));
    const out = await sharp(joined, { raw: { width, height: height * frames.length, channels: 3, pageHeight: height } })
      .webp({ quality: 90, loop: 0, delay })
      .toBuffer();
    return new Uint8Array(out);
  }
  if (width % 2 || height % 2)
    throw new RangeError(`H.264 (yuv420p) needs an even width and height (got ${width}x${height})`);
  const dir = await mkdtemp(join(tmpdir(), 'berth-video-'));
  try {
    const file = join(dir, 'clip.mp4');
    // prettier-ignore
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-nostdin',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-s',
      `${width}x${height}`,
      '-framerate',
      String(fps),
      '-i',
      'pipe:0',
      '-an',
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      '18',
      '-pix_fmt',
      'yuv420p',
      '-r',
      String(fps),
      '-map_metadata',
      '-1',
      '-fflags',
      '+bitexact',
      '-movflags',
      '+faststart',
      '-f',
      'mp4',
      file,
    ];
    await ffmpeg(args, joined, signal);
    return new Uint8Array(await readFile(file));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs ffmpeg with `input` on stdin; rejects with the end of its stderr on a bad exit, or the signal's reason. */
function ffmpeg(args: string[], input: Uint8Array, signal?: AbortSignal): Promise<void> {
  const command = process.env['FFMPEG_BIN'] ?? 'ffmpeg';
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    const onAbort = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString('utf8')).slice(-2000)));
    child.stdin.on('error', () => undefined); // EPIPE if ffmpeg exits early: its status says why
    child.once('error', (err) => reject(new Error(`cannot run ${command}: ${err.message}`)));
    child.once('close', (code, sig) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) reject(signal.reason);
      else if (code === 0) resolve();
      else
        reject(
          new Error(
            `${command} exited with ${code ?? sig}: ${stderr.trim().split('\n').slice(-3).join(' / ') || 'no error output'}`,
          ),
        );
    });
    child.stdin.end(input);
  });
}
