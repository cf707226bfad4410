import { describe, expect, it } from 'vitest';
import { Detokenizer } from './detokenizer.js';
import { argmax, createRng, sampleToken } from './sampler.js';

// A toy vocabulary: id -> text; id 9 and 10 are the two halves of one UTF-8 character (decoded together only).
const VOCAB: Record<number, string> = { 1: 'Hello', 2: ' wor', 3: 'ld', 4: '!', 5: ' S', 6: 'TO', 7: 'P', 8: ' end' };
const decode = (ids: number[]) => {
  let s = '';
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] === 9) s += ids[i + 1] === 10 ? (i++, 'é') : '\uFFFD';
    else s += VOCAB[ids[i]!] ?? '';
  }
  return s;
};

describe('Detokenizer', () => {
  it('releases text token by token and holds back an unfinished character', () => {
    const d = new Detokenizer(decode, []);
    expect([1, 2, 3].map((id) => d.push(id))).toEqual(['Hello', ' wor', 'ld']);
    expect(d.push(9)).toBe('');
    expect(d.push(10)).toBe('é');
    expect(d.result).toBe('Hello worldé');
  });

  it('holds back a possible stop string, cuts at a matched one, and releases a false alarm', () => {
    const d = new Detokenizer(decode, [' STOP']);
    const out = [1, 5, 6].map((id) => d.push(id));
    expect(out).toEqual(['Hello', '', '']); // " S", " STO" may become " STOP"
    expect(d.push(7)).toBe('');
    expect(d.stopped).toBe(true);
    expect(d.result).toBe('Hello');
    const e = new Detokenizer(decode, [' STOP']);
    e.push(1);
    e.push(5);
    expect(e.push(8)).toBe(' S end');
    e.push(5);
    expect(e.finish()).toBe(' S'); // the end releases what was held back
  });
});

describe('sampler', () => {
  const logits = Float32Array.from([0, 2, 1, 0.5]);
  it('temperature 0 is argmax', () => {
    expect(sampleToken(logits, { temperature: 0, topP: 1, rng: createRng(1) })).toBe(argmax(logits));
    expect(argmax(logits)).toBe(1);
  });
  it('the same seed draws the same tokens; top_p keeps only the nucleus', () => {
    const draw = (seed: number, topP: number) => {
      const rng = createRng(seed);
      return Array.from({ length: 200 }, () => sampleToken(logits, { temperature: 1, topP, rng }));
    };
    expect(draw(5, 1)).toEqual(draw(5, 1));
    expect(new Set(draw(5, 1)).size).toBe(4);
    // p(1) = 0.57, p(2) = 0.21: top_p 0.6 keeps tokens 1 and 2 only.
    expect(new Set(draw(5, 0.6))).toEqual(new Set([1, 2]));
  });
});
