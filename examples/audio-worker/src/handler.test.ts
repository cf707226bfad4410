import { runJob } from '@berth/worker/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { createEspeakEngine } from './engines/espeak.js';
import { fetchOutput, probe, useTempOutputDir } from './ffprobe.test-helpers.js';
import { createTtsHandler, type TtsOutput } from './handler.js';
import { readWav } from './wav.js';

const out = useTempOutputDir();
afterAll(() => out.remove());
const handler = createTtsHandler({ engine: createEspeakEngine() });
const text = 'The quick brown fox jumps over the lazy dog. Berth turns text into speech.';

async function speak(input: Record<string, unknown>) {
  const r = await runJob(handler, input);
  expect(r.status, r.error).toBe('COMPLETED');
  const output = r.output as TtsOutput;
  return { output, bytes: await fetchOutput(output.audio_url), progress: r.progress };
}

describe('text-to-speech handler (espeak-ng)', () => {
  it('wav by default: a PCM file with correct header sizes whose duration is the one answered', async () => {
    const { output, bytes, progress } = await speak({ text });
    expect(Object.keys(output)).toEqual(['audio_url', 'format', 'duration']);
    expect(output.audio_url).toMatch(/\.wav$/);
    const wav = readWav(bytes);
    expect(wav.dataOffset + wav.dataBytes).toBe(bytes.length); // no placeholder sizes left
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true)).toBe(bytes.length - 8);
    const p = probe(bytes);
    expect([p.formatName, p.codec, p.sampleRate, p.channels]).toEqual(['wav', 'pcm_s16le', 22050, 1]);
    expect(p.duration).toBeCloseTo(output.duration, 2);
    expect(output.duration).toBeGreaterThan(2); // 14 words at 175 words per minute
    expect(progress.map((x) => (x as { stage: string }).stage)).toEqual(['synthesize', 'encode']);
  });

  it.each([
    ['mp3', 'mp3', 'mp3'],
    ['ogg', 'ogg', 'vorbis'],
  ])('output_format %s is decodable by ffprobe with about the same duration', async (format, container, codec) => {
    const wav = await speak({ text });
    const { output, bytes } = await speak({ text, output_format: format });
    expect(output.format).toBe(format);
    const p = probe(bytes);
    expect([p.formatName, p.codec]).toEqual([container, codec]);
    expect(Math.abs(p.duration - wav.output.duration)).toBeLessThan(0.15); // encoder padding
    expect(bytes.length).toBeLessThan(wav.bytes.length / 2);
  });

  it('speed 2 speaks faster than speed 0.5; the same input gives the same bytes; voices and variants change the sound', async () => {
    const fast = await speak({ text, speed: 2 });
    const slow = await speak({ text, speed: 0.5 });
    expect(slow.output.duration / fast.output.duration).toBeGreaterThan(2.5);
    const a = await speak({ text: 'Hello', voice: 'en-gb', pitch: 20 });
    const b = await speak({ text: 'Hello', voice: 'en-gb', pitch: 20 });
    expect(Buffer.compare(a.bytes, b.bytes)).toBe(0);
    const c = await speak({ text: 'Hello', voice: 'EN-GB+F3', pitch: 20 });
    expect(Buffer.compare(a.bytes, c.bytes)).not.toBe(0);
    const french = await speak({ text: 'Bonjour tout le monde', voice: 'fr-fr' });
    expect(french.output.duration).toBeGreaterThan(0.5);
  });

  it('text that looks like options is spoken, not parsed', async () => {
    const { output } = await speak({ text: '--help -v xx' });
    expect(output.duration).toBeGreaterThan(0.3);
  });

  it.each([
    [{}, /^invalid_input: text: must be a string \(got nothing\)$/],
    [{ text: '' }, /^invalid_input: text: must not be empty$/],
    [{ text: '   ' }, /^invalid_input: text: must not be empty$/],
    [{ text: 'x'.repeat(5001) }, /^invalid_input: text: must be at most 5000 characters \(got 5001\)$/],
    [
      { text, voice: 'klingon' },
      /^invalid_input: voice: unknown voice "klingon" \(espeak-ng languages include "en-us", /,
    ],
    [{ text, voice: 'en-us+robot' }, /^invalid_input: voice: unknown voice variant "robot" \(variants include /],
    [{ text, voice: 'en us' }, /^invalid_input: voice: must be a voice name like "en-us"/],
    [{ text, speed: 3 }, /^invalid_input: speed: must be from 0.5 to 2 \(got 3\)$/],
    [{ text, speed: 'fast' }, /^invalid_input: speed: must be a number \(got "fast"\)$/],
    [{ text, pitch: 120 }, /^invalid_input: pitch: must be from 0 to 99 \(got 120\)$/],
    [{ text, pitch: 2.5 }, /^invalid_input: pitch: must be a whole number \(got 2.5\)$/],
    [{ text, output_format: 'flac' }, /^invalid_input: output_format: must be one of wav, mp3, ogg \(got "flac"\)$/],
    [{ text, rate: 1 }, /^invalid_input: unknown field "rate"$/],
    ['hello', /^invalid_input: input: must be an object like \{"text": "Hello"\}/],
  ])('bad input %j fails the job with a clear invalid_input error', async (input, message) => {
    const r = await runJob(handler, input as never);
    expect(r.status).toBe('FAILED');
    expect(r.error).toMatch(message);
  });

  it('a missing espeak-ng binary fails the job naming the command', async () => {
    const broken = createTtsHandler({ engine: createEspeakEngine({ command: '/nonexistent/espeak-ng' }) });
    const r = await runJob(broken, { text: 'hi' });
    expect(r.status).toBe('FAILED');
    expect(r.error).toMatch(/cannot run \/nonexistent\/espeak-ng: .*ENOENT/);
  });
});
