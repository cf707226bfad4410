import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '@berth/worker/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { adjustSpeech } from '../adjust.js';
import { probe, useTempOutputDir } from '../ffprobe.test-helpers.js';
import { createTtsHandler } from '../handler.js';
import { readWav } from '../wav.js';
import { chooseEngine } from './choose.js';
import { createEspeakEngine } from './espeak.js';

const out = useTempOutputDir();
const notAModel = mkdtempSync(join(tmpdir(), 'berth-not-a-model-'));
writeFileSync(join(notAModel, 'README.md'), 'not a model');
afterAll(() => {
  out.remove();
  rmSync(notAModel, { recursive: true, force: true });
});
const signal = new AbortController().signal;

/** Dominant frequency (Hz) of 16-bit mono PCM by counting zero crossings of a steady tone. */
function zeroCrossingHz(wav: Uint8Array): number {
  const info = readWav(wav);
  const view = new DataView(wav.buffer, wav.byteOffset + info.dataOffset, info.dataBytes);
  let crossings = 0;
  let prev = 0;
  for (let i = 0; i < info.dataBytes / 2; i++) {
    const s = view.getInt16(i * 2, true);
    if ((prev < 0 && s >= 0) || (prev >= 0 && s < 0)) crossings++;
    prev = s;
  }
  return crossings / 2 / info.duration;
}

/** A 1 s, 440 Hz sine WAV at 22050 Hz. */
function tone(): Uint8Array {
  const n = 22050;
  const header = new Uint8Array(44 + n * 2);
  const v = new DataView(header.buffer);
  header.set(new TextEncoder().encode('RIFF'), 0);
  v.setUint32(4, 36 + n * 2, true);
  header.set(new TextEncoder().encode('WAVEfmt '), 8);
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true);
  v.setUint16(22, 1, true);
  v.setUint32(24, 22050, true);
  v.setUint32(28, 44100, true);
  v.setUint16(32, 2, true);
  v.setUint16(34, 16, true);
  header.set(new TextEncoder().encode('data'), 36);
  v.setUint32(40, n * 2, true);
  for (let i = 0; i < n; i++)
    v.setInt16(44 + i * 2, Math.round(12000 * Math.sin((2 * Math.PI * 440 * i) / 22050)), true);
  return header;
}

describe('adjustSpeech (ffmpeg filters for engines without speed/pitch controls)', () => {
  it('speed changes the duration, not the pitch; pitch changes the frequency, not the duration', async () => {
    const wav = tone();
    expect(await adjustSpeech(wav, { speed: 1, pitch: 50 })).toBe(wav);
    const fast = await adjustSpeech(wav, { speed: 2, pitch: 50 });
    expect(readWav(fast).duration).toBeCloseTo(0.5, 1);
    expect(zeroCrossingHz(fast)).toBeCloseTo(440, -1);
    const slow = await adjustSpeech(wav, { speed: 0.5, pitch: 0 }); // tempo below 0.5 after the pitch shift: two atempo
    expect(readWav(slow).duration).toBeCloseTo(2, 1);
    const high = await adjustSpeech(wav, { speed: 1, pitch: 99 });
    expect(readWav(high).duration).toBeCloseTo(1, 1);
    expect(zeroCrossingHz(high) / 440).toBeCloseTo(2 ** (((49 / 50) * 4) / 12), 1); // about +4 semitones
    expect(probe(high).codec).toBe('pcm_s16le');
  });
});

describe('chooseEngine', () => {
  it('espeak-ng without TTS_MODEL, with TTS_DEFAULT_VOICE as the default voice', async () => {
    const engine = chooseEngine({ TTS_DEFAULT_VOICE: 'fr-fr' });
    expect([engine.name, engine.defaultVoice]).toEqual(['espeak-ng', 'fr-fr']);
    expect(await engine.checkVoice('EN-US')).toMatchObject({ ok: true, voice: 'en-us' });
    expect(readWav(await engine.synthesize({ text: 'salut', speed: 1, pitch: 50 }, signal)).duration).toBeGreaterThan(
      0.2,
    );
  });

  it('TTS_MODEL selects the transformers.js engine; one voice; a folder that is no model fails the job naming it', async () => {
    const engine = chooseEngine({ TTS_MODEL: notAModel, BERTH_MODELS_DIR: '/nowhere' });
    expect([engine.name, engine.defaultVoice]).toEqual([`transformers.js ${notAModel}`, 'default']);
    expect(await engine.checkVoice('en-us')).toEqual({
      ok: false,
      problem: 'this model has one voice, "default" (got "en-us")',
    });
    const r = await runJob(createTtsHandler({ engine }), { text: 'hello' });
    expect(r.status).toBe('FAILED');
    expect(r.error).toContain(`cannot load the text-to-speech model ${notAModel}`);
    const bad = await runJob(createTtsHandler({ engine }), { text: 'hello', voice: 'en-us' });
    expect(bad.error).toBe('invalid_input: voice: this model has one voice, "default" (got "en-us")');
  });

  it('espeak-ng honours the abort signal', async () => {
    const c = new AbortController();
    c.abort(new Error('cancelled'));
    await expect(createEspeakEngine().synthesize({ text: 'hello', speed: 1, pitch: 50 }, c.signal)).rejects.toThrow(
      'cancelled',
    );
  });
});
