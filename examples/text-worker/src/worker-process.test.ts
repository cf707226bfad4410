import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLocalFolder } from './load.js';
import { MODELS_DIR, REPO_ROOT } from './testing.test-helpers.js';

const DIR = join(REPO_ROOT, 'examples/text-worker');

/** Runs `node --import tsx worker.ts <args>` in the example folder; resolves with exit code and output. */
function runWorker(
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const { BERTH_URL: _u, BERTH_MODELS_DIR: _m, BERTH_TEXT_MODEL: _t, ...base } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', 'worker.ts', ...args], {
      cwd: DIR,
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('text worker process', () => {
  it('exits 1 with a clear message when the model folder is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'berth-models-'));
    try {
      const r = await runWorker({ BERTH_MODELS_DIR: empty });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`model folder ${join(empty, 'stories260K')} does not exist`);
      expect(r.stderr).toContain('BERTH_TEXT_MODEL');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('names the missing files of an incomplete folder', () => {
    expect(() => checkLocalFolder(join(MODELS_DIR, 'esrgan-x2'))).toThrow(
      /esrgan-x2 is missing tokenizer\.json, tokenizer_config\.json;/,
    );
    expect(() => checkLocalFolder(join(MODELS_DIR, 'stories260K'))).not.toThrow();
  });

  it('runs one job offline with --test-input and logs the load as a cold start', async () => {
    const r = await runWorker({ BERTH_MODELS_DIR: MODELS_DIR }, [
      '--test-input',
      JSON.stringify({ input: { prompt: 'Once upon a time', max_tokens: 8, temperature: 0 } }),
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('loading model (cold start)');
    expect(r.stderr).toMatch(/"loadMs":\d+.*"msg":"model loaded"/); // the worker's JSON log line
    expect(r.stderr, 'a local folder is not a download').not.toContain('model download');
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({
      id: 'local-test',
      status: 'COMPLETED',
      output: { text: [', there was a little girl'], input_tokens: 5, output_tokens: 8 },
    });
  });
});
