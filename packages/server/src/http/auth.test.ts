import { describe, expect, it } from 'vitest';
import { KeyChecker } from './auth.js';

describe('KeyChecker', () => {
  it('answers the same key every time (remembered after the first match), a fresh object each time', () => {
    const keys = new KeyChecker(['alpha-secret', 'beta-secret'], 'key');
    const first = keys.authenticate('Bearer beta-secret');
    const again = keys.authenticate('beta-secret');
    expect(first).toEqual({ keyId: 'key2' });
    expect(again).toEqual({ keyId: 'key2' });
    again.keyId = 'changed by a caller';
    expect(keys.authenticate('Bearer beta-secret')).toEqual({ keyId: 'key2' });
    expect(keys.authenticate('bearer   alpha-secret ')).toEqual({ keyId: 'key1' });
  });

  it('refuses unknown and missing keys every time (nothing about them is remembered), and stays right past the memo size', () => {
    const keys = new KeyChecker(['alpha-secret'], 'key');
    for (let i = 0; i < 3; i++) expect(() => keys.authenticate('Bearer not-a-key')).toThrow('unknown API key');
    expect(() => keys.authenticate(undefined)).toThrow('missing API key');
    const many = Array.from({ length: 100 }, (_, i) => `secret-${i}`);
    const big = new KeyChecker(many, 'key');
    for (let round = 0; round < 2; round++)
      for (let i = 0; i < many.length; i++) expect(big.match(many[i]!)).toEqual({ keyId: `key${i + 1}` });
    expect(big.match('secret-100')).toBeUndefined();
  });
});
