import { describe, expect, it } from 'vitest';
import { DeadlineHeap } from './deadline-heap.js';
import { random } from '../conformance/fixtures.test-helpers.js';

type Item = { at: number; id: string };
const key = (x: Item): string => `${x.at}/${x.id}`;

describe('DeadlineHeap', () => {
  it('is empty at first', () => {
    const heap = new DeadlineHeap();
    expect(heap.size).toBe(0);
    expect(heap.peek()).toBeUndefined();
    expect(heap.pop()).toBeUndefined();
    expect(heap.size).toBe(0);
  });

  it('pops everything pushed in deadline order, against a sorted array', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const rand = random(seed);
      const heap = new DeadlineHeap();
      const n = Math.floor(rand() * 2_000);
      const spread = seed % 3 === 0 ? 10 : 1e12; // few distinct deadlines -> many ties
      const pushed: Item[] = [];
      for (let i = 0; i < n; i++) {
        const item = { at: Math.floor(rand() * spread) - spread / 2, id: `j${i}` };
        pushed.push(item);
        heap.push(item.at, item.id);
      }
      expect(heap.size).toBe(n);
      const popped: Item[] = [];
      for (let top = heap.peek(); top; top = heap.peek()) {
        expect(heap.pop()).toBe(top);
        popped.push(top);
      }
      expect(heap.size).toBe(0);
      expect(popped.map((x) => x.at)).toEqual(pushed.map((x) => x.at).sort((a, b) => a - b));
      expect(popped.map(key).sort()).toEqual(pushed.map(key).sort());
    }
  });

  it('always pops a minimum when pushes and pops interleave', () => {
    for (let seed = 100; seed < 110; seed++) {
      const rand = random(seed);
      const heap = new DeadlineHeap();
      const model: Item[] = [];
      for (let step = 0; step < 4_000; step++) {
        if (rand() < 0.55) {
          const item = { at: Math.floor(rand() * 1_000), id: `s${step}` };
          heap.push(item.at, item.id);
          model.push(item);
        } else {
          const got = heap.pop();
          if (model.length === 0) {
            expect(got).toBeUndefined();
            continue;
          }
          const min = Math.min(...model.map((x) => x.at));
          expect(got?.at).toBe(min);
          const i = model.findIndex((x) => x.at === got?.at && x.id === got.id);
          expect(i).toBeGreaterThanOrEqual(0);
          model.splice(i, 1);
        }
        expect(heap.size).toBe(model.length);
      }
    }
  });

  it('keeps duplicate entries of the same id', () => {
    const heap = new DeadlineHeap();
    heap.push(5, 'a');
    heap.push(5, 'a');
    heap.push(1, 'a');
    expect([heap.pop(), heap.pop(), heap.pop(), heap.pop()]).toEqual([
      { at: 1, id: 'a' },
      { at: 5, id: 'a' },
      { at: 5, id: 'a' },
      undefined,
    ]);
  });
});
