import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';

/** What the real `ffprobe` says about an MP4's video stream (frames counted by decoding them all). */
export interface VideoProbe {
  formatName: string;
  codec: string;
  pixFmt: string;
  width: number;
  height: number;
  /** Frames per second from `r_frame_rate`. */
  fps: number;
  frames: number;
  duration: number;
}

export function probeVideo(bytes: Uint8Array): VideoProbe {
  const dir = mkdtempSync(join(tmpdir(), 'berth-probe-'));
  try {
    const file = join(dir, 'clip');
    writeFileSync(file, bytes);
    const args = [
      '-v',
      'error',
      '-count_frames',
      '-select_streams',
      'v:0',
      '-show_entries',
      'format=format_name,duration:stream=codec_name,pix_fmt,width,height,r_frame_rate,nb_read_frames',
      '-of',
      'json',
      file,
    ];
    const j = JSON.parse(execFileSync('ffprobe', args, { encoding: 'utf8' })) as {
      format: { format_name: string; duration: string };
      streams: {
        codec_name: string;
        pix_fmt: string;
        width: number;
        height: number;
        r_frame_rate: string;
        nb_read_frames: string;
      }[];
    };
    const s = j.streams[0]!;
    const [num, den] = s.r_frame_rate.split('/').map(Number) as [number, number];
    return {
      formatName: j.format.format_name,
      codec: s.codec_name,
      pixFmt: s.pix_fmt,
      width: s.width,
      height: s.height,
      fps: num / den,
      frames: Number(s.nb_read_frames),
      duration: Number(j.format.duration),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Decodes every frame of an MP4 to raw RGB with ffmpeg. */
export function mp4Frames(bytes: Uint8Array, width: number, height: number): Uint8Array[] {
  const dir = mkdtempSync(join(tmpdir(), 'berth-probe-'));
  try {
    const file = join(dir, 'clip.mp4');
    writeFileSync(file, bytes);
    const raw = execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], {
      maxBuffer: 64 * 1024 * 1024,
    });
    const size = width * height * 3;
    return Array.from({ length: raw.length / size }, (_, i) => new Uint8Array(raw.subarray(i * size, (i + 1) * size)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An animated WebP's frames (RGB) and timing, decoded by sharp (ffmpeg cannot decode animated WebP). */
export async function webpFrames(
  bytes: Uint8Array,
): Promise<{ frames: Uint8Array[]; delay: number[]; loop: number; width: number; height: number }> {
  const meta = await sharp(bytes, { animated: true }).metadata();
  const { data, info } = await sharp(bytes, { animated: true })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const height = meta.pageHeight ?? info.height;
  const size = info.width * height * 3;
  const frames = Array.from(
    { length: meta.pages ?? 1 },
    (_, i) => new Uint8Array(data.subarray(i * size, (i + 1) * size)),
  );
  return { frames, delay: meta.delay ?? [], loop: meta.loop ?? -1, width: info.width, height };
}

/** Share of pixels that are clearly blue / green / red. */
export function colourShares(rgb: Uint8Array): { red: number; green: number; blue: number } {
  let red = 0;
  let green = 0;
  let blue = 0;
  for (let i = 0; i < rgb.length; i += 3) {
    const [r, g, b] = [rgb[i]!, rgb[i + 1]!, rgb[i + 2]!];
    if (r > 150 && g < 110 && b < 110) red++;
    if (g > 120 && r < 110 && b < 110) green++;
    if (b > 150 && r < 110 && g < 110) blue++;
  }
  const n = rgb.length / 3;
  return { red: red / n, green: green / n, blue: blue / n };
}
