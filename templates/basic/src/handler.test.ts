import { readFileSync } from 'node:fs';
import { runJob } from '@berth/worker/testing';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { handler, Input } from './handler.js';

const testInput = JSON.parse(readFileSync(new URL('../test_input.json', import.meta.url), 'utf8')) as {
  input: z.input<typeof Input>;
};

describe('handler', () => {
  it('answers test_input.json', async () => {
    const result = await runJob(handler, testInput.input, { inputSchema: Input });
    expect(result.status).toBe('COMPLETED');
    expect(result.output).toEqual({ greetings: ['Hello, Berth! (1/2)', 'Hello, Berth! (2/2)'] });
    expect(result.progress).toEqual([
      { done: 1, of: 2 },
      { done: 2, of: 2 },
    ]);
  });

  it('fails a job with a bad input, naming the field', async () => {
    const result = await runJob(handler, { name: '' }, { inputSchema: Input });
    expect(result.status).toBe('FAILED');
    expect(result.error).toMatch(/name/);
  });
});
