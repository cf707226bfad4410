import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { lineBatcher } from './line-batcher.js';

describe('lineBatcher', () => {
  it('writes the lines of one event-loop turn as one chunk, in order, on the next turn', async () => {
    const chunks: string[] = [];
    const line = lineBatcher((c) => chunks.push(c));
    line('a\n');
    line('b\n');
    expect(chunks).toEqual([]);
    await turn();
    line('c\n');
    await turn();
    expect(chunks).toEqual(['a\nb\n', 'c\n']);
  });
});
