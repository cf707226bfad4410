import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBatch, runJob } from '@berth/worker/testing';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { batchHandler, handler, type Input } from './handler.js';

// The model comes from BERTH_MODELS_DIR (without it, the handler says to set it); in the Berth repository, from
// ../shared/models next to the checkout when that folder is there.
const shared = fileURLToPath(new URL('../../../../shared/models', import.meta.url));
if (!process.env['BERTH_MODELS_DIR'] && existsSync(join(shared, 'stories260K')))
  process.env['BERTH_MODELS_DIR'] = shared;
const testInput = JSON.parse(readFileSync(new URL('../test_input.json', import.meta.url), 'utf8')) as {
  input: z.input<typeof Input>;
};

describe('text handler', () => {
  it('streams a story for test_input.json, token by token', async () => {
    const result = await runJob(handler, testInput.input, { return_aggregate_stream: true });
    expect(result.status, result.error).toBe('COMPLETED');
    const text = (result.chunks as { text: string }[]).map((c) => c.text).join('');
    expect(result.chunks.length).toBeGreaterThan(3);
    expect(text).toMatch(/there was a little/);
    expect(result.output).toEqual(result.chunks);
  }, 30_000);

  it('fails a job without a prompt', async () => {
    // Not an `Input` (the types say so): the handler's own check must fail the job at run time too.
    const result = await runJob(handler, { max_new_tokens: 4 } as z.input<typeof Input>);
    expect(result.status).toBe('FAILED');
    expect(result.error).toMatch(/prompt/);
  });

  it('a batch: each job streams the text its prompt gives alone; a bad input fails alone', async () => {
    const inputs = [
      { prompt: 'Once upon a time', max_new_tokens: 24 },
      { prompt: 'Tom had a red ball', max_new_tokens: 8 },
      { prompt: 'Lily and her mom went to the park to play. They saw', max_new_tokens: 16 },
      { prompt: '' },
    ];
    const results = await runBatch(batchHandler, inputs);
    expect(results.map((r) => r.status)).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED']);
    expect(results[3]!.error).toMatch(/^invalid_input: prompt: /);
    for (const [i, input] of inputs.slice(0, 3).entries()) {
      const alone = await runJob(handler, input);
      const text = (chunks: unknown[]) => (chunks as { text: string }[]).map((c) => c.text).join('');
      expect(text(results[i]!.chunks)).toBe(text(alone.chunks));
      expect(text(results[i]!.chunks).length).toBeGreaterThan(0);
      expect(results[i]!.output).toEqual(results[i]!.chunks);
    }
  }, 60_000);
});
