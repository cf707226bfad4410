import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchEngine, type GenerateRequest } from '../engine/batch-engine.js';
import { ModelLoadError, type LoadedModel } from '../load.js';
import { resolveTextWorkerOptions } from '../options.js';
import { loadStories, STORIES } from '../testing.test-helpers.js';
import { ThreadEngine, threadEntry } from './thread-engine.js';

let m: LoadedModel;
let thread: ThreadEngine;
beforeAll(async () => {
  m = await loadStories();
  thread = await ThreadEngine.start(resolveTextWorkerOptions({ model: STORIES, maxBatch: 8 }, {}), 'warn');
});
afterAll(async () => {
  await thread?.close();
  await m?.model.dispose();
});

const PROMPTS = ['Once upon a time', 'Tom had a red ball', 'The sun', 'Lily saw a cat'];
const req = (prompt: string, extra: Partial<GenerateRequest> = {}): GenerateRequest => ({
  promptIds: m.tokenizer.encode(prompt),
  maxTokens: 30,
  temperature: 0.8,
  topP: 1,
  stop: [],
  seed: 3,
  ...extra,
});

describe('ThreadEngine (the model in a worker thread)', () => {
  it('reports the model it loaded', () => {
    expect(thread.info).toMatchObject({ contextLength: m.contextLength, eosTokenIds: m.eosTokenIds });
  });

  it('streams the same pieces of text and results as the engine in this thread, for requests made together', async () => {
    const local = new BatchEngine(m.model, {
      decode: (ids) => m.tokenizer.decode(ids, { skip_special_tokens: true }),
      eosTokenIds: m.eosTokenIds,
      contextLength: m.contextLength,
      maxBatch: 8,
    });
    const run = async (e: { generate: BatchEngine['generate'] }) => {
      const deltas = PROMPTS.map((): string[] => []);
      const results = await Promise.all(
        PROMPTS.map((p, i) => e.generate(req(p, { seed: i, onDelta: (t) => deltas[i]!.push(t) }))),
      );
      return { deltas, results };
    };
    const here = await run(local);
    const promise = run(thread);
    expect(thread.load).toBe(PROMPTS.length);
    const there = await promise;
    expect(thread.load).toBe(0);
    expect(there).toEqual(here);
    // One piece per token (as the engine releases them), not joined into fewer, longer pieces.
    there.results.forEach((r, i) => expect(there.deltas[i]!.join('')).toBe(r.text));
    expect(there.deltas[0]!.length).toBeGreaterThan(there.results[0]!.completionTokens * 0.8);
  });

  it('first text at once, later text of a fast model in fewer messages, still one piece per token', async () => {
    const slow = await ThreadEngine.start(resolveTextWorkerOptions({ model: STORIES }, {}), 'warn', {
      minGapMs: 60_000,
    });
    try {
      const pieces: number[] = [];
      const r = await slow.generate(req(PROMPTS[2]!, { onDelta: () => pieces.push(slow.messages) }));
      expect(pieces.length).toBeGreaterThan(r.completionTokens * 0.8);
      // The first piece came alone; every later one waited for the result (the gap never passed).
      expect(pieces[0]).toBe(1);
      expect(new Set(pieces.slice(1))).toEqual(new Set([2]));
      expect(slow.messages).toBe(2);
    } finally {
      await slow.close();
    }
  });

  it('answers without text callbacks too (no streaming across threads)', async () => {
    const r = await thread.generate(req(PROMPTS[0]!, { temperature: 0 }));
    expect(r.text.length).toBeGreaterThan(0);
    expect(r.finishReason).toBe('length');
  });

  it('an abort signal cancels the sequence in the thread', async () => {
    const ac = new AbortController();
    let pieces = 0;
    const r = await thread.generate(
      req(PROMPTS[1]!, {
        maxTokens: 400,
        signal: ac.signal,
        onDelta: () => {
          if (++pieces === 3) ac.abort();
        },
      }),
    );
    expect(r.finishReason).toBe('cancelled');
    expect(r.completionTokens).toBeLessThan(400);
  });

  it('an engine error rejects that request with its message', async () => {
    await expect(thread.generate(req('x', { promptIds: [] }))).rejects.toThrow('the prompt is empty');
  });

  it('a model folder that does not load fails start() with ModelLoadError', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'berth-thread-'));
    try {
      const start = ThreadEngine.start(resolveTextWorkerOptions({ model: empty }, {}), 'warn');
      await expect(start).rejects.toThrow(ModelLoadError);
      await expect(start).rejects.toThrow(/missing config\.json/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('finds its thread file next to the module, and none in a bundle folder (the engine then stays on the main thread)', () => {
    expect(threadEntry()?.pathname).toMatch(/engine-thread-boot\.mjs$/);
    const bundleDir = mkdtempSync(join(tmpdir(), 'berth-bundle-'));
    try {
      expect(threadEntry(pathToFileURL(join(bundleDir, 'worker.mjs')).href)).toBeUndefined();
    } finally {
      rmSync(bundleDir, { recursive: true, force: true });
    }
  });
});
