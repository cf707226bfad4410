import { spawnSync } from 'node:child_process';

/**
 * The programs this worker spawns that cannot be run here: espeak-ng (unless `TTS_MODEL` picks the transformers.js
 * engine) and ffmpeg (MP3 and Ogg output). Each entry names the program and why it failed.
 */
export function missingPrograms(env: NodeJS.ProcessEnv = process.env): string[] {
  const wanted: [string, string[]][] = [];
  if (!env['TTS_MODEL']) wanted.push([env['ESPEAK_NG_BIN'] ?? 'espeak-ng', ['--version']]);
  wanted.push([env['FFMPEG_BIN'] ?? 'ffmpeg', ['-version']]);
  const out: string[] = [];
  for (const [command, args] of wanted) {
    const r = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 });
    if (r.error) out.push(`${command} (${(r.error as NodeJS.ErrnoException).code ?? r.error.message})`);
  }
  return out;
}

/** Exits 1 with one message, before the worker connects, when a program it needs is missing. */
export function exitUnlessProgramsInstalled(env: NodeJS.ProcessEnv = process.env): void {
  const missing = missingPrograms(env);
  if (missing.length === 0) return;
  process.stderr.write(
    `audio worker cannot start: cannot run ${missing.join(' and ')}.\n` +
      'Install them (Debian: apt-get install espeak-ng ffmpeg; in an image: "apt": ["espeak-ng", "ffmpeg"] for the endpoint in berth.config.json), ' +
      'or point ESPEAK_NG_BIN / FFMPEG_BIN at them.\n',
  );
  process.exit(1);
}
