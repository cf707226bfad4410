import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { missingPrograms } from './startup-check.js';

const TTS = fileURLToPath(new URL('../tts.ts', import.meta.url));

describe('audio worker startup check', () => {
  it('finds espeak-ng and ffmpeg when installed; names the missing ones', () => {
    expect(missingPrograms({})).toEqual([]);
    expect(missingPrograms({ ESPEAK_NG_BIN: '/nonexistent/espeak-ng', FFMPEG_BIN: '/nonexistent/ffmpeg' })).toEqual([
      '/nonexistent/espeak-ng (ENOENT)',
      '/nonexistent/ffmpeg (ENOENT)',
    ]);
    // The transformers.js engine does not need espeak-ng.
    expect(missingPrograms({ TTS_MODEL: 'x', ESPEAK_NG_BIN: '/nonexistent/espeak-ng' })).toEqual([]);
  });

  it('the worker exits 1 with one message before it connects when espeak-ng is missing', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', TTS], {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env['PATH'],
        ESPEAK_NG_BIN: '/nonexistent/espeak-ng',
        BERTH_URL: 'http://127.0.0.1:9',
        BERTH_ENDPOINT_ID: 'tts',
        BERTH_WORKER_TOKEN: 'berthw_x',
      },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('audio worker cannot start: cannot run /nonexistent/espeak-ng (ENOENT).');
    expect(r.stderr).toContain('"apt": ["espeak-ng", "ffmpeg"]');
    expect(r.stderr).not.toContain('connect');
  }, 60_000);
});
