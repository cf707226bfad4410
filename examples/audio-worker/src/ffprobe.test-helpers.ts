import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What ffprobe says about a media file: container, first stream's codec, duration (s), sample rate. */
export interface Probe {
  formatName: string;
  codec: string;
  duration: number;
  sampleRate: number;
  channels: number;
}

/** Runs the real `ffprobe` on `bytes` (written to a temp file). */
export function probe(bytes: Uint8Array): Probe {
  const dir = mkdtempSync(join(tmpdir(), 'berth-probe-'));
  try {
    const file = join(dir, 'media');
    writeFileSync(file, bytes);
    const out = execFileSync(
      'ffprobe',
      [
        '-v',
        'error',
        '-show_entries',
        'format=format_name,duration:stream=codec_name,sample_rate,channels',
        '-of',
        'json',
        file,
      ],
      { encoding: 'utf8' },
    );
    const j = JSON.parse(out) as {
      format: { format_name: string; duration: string };
      streams: { codec_name: string; sample_rate: string; channels: number }[];
    };
    const s = j.streams[0]!;
    return {
      formatName: j.format.format_name,
      codec: s.codec_name,
      duration: Number(j.format.duration),
      sampleRate: Number(s.sample_rate),
      channels: s.channels,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bytes behind a `file://` output URL (local mode) or an http(s) one. */
export async function fetchOutput(url: string): Promise<Uint8Array> {
  if (url.startsWith('file:')) return new Uint8Array(readFileSync(fileURLToPath(url)));
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Local-mode outputs go to a temp folder for the test file (no bucket, no control plane). */
export function useTempOutputDir(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'berth-audio-worker-'));
  process.env['BERTH_OUTPUT_DIR'] = dir;
  for (const k of [
    'BUCKET_ENDPOINT_URL',
    'BUCKET_ACCESS_KEY_ID',
    'BUCKET_SECRET_ACCESS_KEY',
    'BERTH_URL',
    'BERTH_WORKER_TOKEN',
  ])
    delete process.env[k];
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
