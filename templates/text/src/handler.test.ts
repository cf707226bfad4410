import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runJob } from '@berth/worker/testing';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { handler, type Input } from './handler.js';

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
});
