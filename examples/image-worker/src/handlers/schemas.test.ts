import { describe, expect, it } from 'vitest';
import { parseInput } from './input-error.js';
import { TextToImageInput } from './schemas.js';

// templates/image and this worker take the same field for the number of denoising steps (issue #19):
// num_inference_steps, as the public image models do, with `steps` accepted for it.
describe('TextToImageInput steps', () => {
  it('num_inference_steps, `steps` for the same field, default 20', () => {
    expect(parseInput(TextToImageInput, { prompt: 'x', num_inference_steps: 7 }).num_inference_steps).toBe(7);
    expect(parseInput(TextToImageInput, { prompt: 'x', steps: 4 }).num_inference_steps).toBe(4);
    expect(parseInput(TextToImageInput, { prompt: 'x' }).num_inference_steps).toBe(20);
    expect(parseInput(TextToImageInput, { prompt: 'x', steps: 4 })).not.toHaveProperty('steps');
  });

  it('the same range for both names; unknown fields still refused', () => {
    expect(() => parseInput(TextToImageInput, { prompt: 'x', steps: 0 })).toThrow(
      /steps: must be at least 1 \(got 0\)/,
    );
    expect(() => parseInput(TextToImageInput, { prompt: 'x', stepz: 4 })).toThrow(/unknown field "stepz"/);
  });
});
