import { describe, expect, it } from 'vitest';
import { HUB_DEFAULT_DTYPE, HUB_DEFAULT_MODEL, resolveTextWorkerOptions } from './options.js';
import { InputError, readMessages, readSettings } from './params.js';

describe('resolveTextWorkerOptions', () => {
  it('defaults to the hub model, remote on, q4', () => {
    expect(resolveTextWorkerOptions({}, {})).toMatchObject({
      model: HUB_DEFAULT_MODEL,
      local: false,
      allowRemote: true,
      dtype: HUB_DEFAULT_DTYPE,
      device: 'auto',
      modelName: HUB_DEFAULT_MODEL,
      maxBatch: 16,
    });
  });
  it('BERTH_MODELS_DIR selects stories260K from it with remote loading off', () => {
    expect(resolveTextWorkerOptions({}, { BERTH_MODELS_DIR: '/m' })).toMatchObject({
      model: '/m/stories260K',
      local: true,
      allowRemote: false,
      dtype: undefined,
      modelName: 'stories260K',
    });
  });
  it('environment beats code; concurrency sets the batch size', () => {
    const o = resolveTextWorkerOptions(
      { model: './a', dtype: 'fp16', maxBatch: 2 },
      { BERTH_TEXT_MODEL: 'org/b', BERTH_TEXT_DTYPE: 'q8', BERTH_CONCURRENCY: '8', BERTH_TEXT_THREADS: '1' },
    );
    expect(o).toMatchObject({ model: 'org/b', local: false, dtype: 'q8', maxBatch: 2, threads: 1 });
    expect(resolveTextWorkerOptions({}, { BERTH_CONCURRENCY: '8' }).maxBatch).toBe(8);
    expect(resolveTextWorkerOptions({}, { BERTH_TEXT_MAX_BATCH: '4', BERTH_CONCURRENCY: '8' }).maxBatch).toBe(4);
  });
  it('bad values name the variable', () => {
    expect(() => resolveTextWorkerOptions({}, { BERTH_TEXT_MAX_BATCH: '0' })).toThrow(
      'BERTH_TEXT_MAX_BATCH must be a whole number from 1 to 256 (got "0")',
    );
    expect(() => resolveTextWorkerOptions({}, { BERTH_TEXT_ALLOW_REMOTE: 'maybe' })).toThrow('BERTH_TEXT_ALLOW_REMOTE');
    expect(() => resolveTextWorkerOptions({}, { BERTH_TEXT_ENGINE_THREAD: 'yes' })).toThrow(
      'BERTH_TEXT_ENGINE_THREAD must be 1 or 0 (got "yes")',
    );
  });
  it('the engine runs in its own thread unless turned off', () => {
    expect(resolveTextWorkerOptions({}, {}).engineThread).toBe(true);
    expect(resolveTextWorkerOptions({ engineThread: false }, {}).engineThread).toBe(false);
    expect(resolveTextWorkerOptions({ engineThread: true }, { BERTH_TEXT_ENGINE_THREAD: '0' }).engineThread).toBe(
      false,
    );
  });
});

describe('request settings', () => {
  it('OpenAI defaults, max_completion_tokens over max_tokens, stop as a list', () => {
    expect(readSettings({})).toEqual({
      maxTokens: undefined,
      temperature: 1,
      topP: 1,
      stop: [],
      seed: undefined,
      n: 1,
    });
    expect(readSettings({ max_tokens: 5, max_completion_tokens: 7, stop: 'x', seed: 3, n: 2, temperature: 0 })).toEqual(
      { maxTokens: 7, temperature: 0, topP: 1, stop: ['x'], seed: 3, n: 2 },
    );
  });
  it('bad fields throw InputError naming them', () => {
    expect(() => readSettings({ temperature: 9 })).toThrow(InputError);
    expect(() => readSettings({ top_p: 0 })).toThrow(expect.objectContaining({ param: 'top_p' }));
    expect(() => readMessages([{ role: 'user', content: 5 }])).toThrow(
      expect.objectContaining({ param: 'messages[0].content' }),
    );
    expect(
      readMessages([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      ]),
    ).toEqual([{ role: 'user', content: 'ab' }]);
  });
});
