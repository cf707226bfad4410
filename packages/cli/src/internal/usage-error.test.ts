import { describe, expect, it } from 'vitest';
import { EXIT, UsageError } from './usage-error.js';

describe('UsageError', () => {
  it('names the command whose --help to show and keeps the error it wraps as `cause`', () => {
    const inner = new SyntaxError('Unexpected token');
    const err = new UsageError('--port must be a number', 'dev', { cause: inner });
    expect([err.name, err.message, err.command, err.cause]).toEqual([
      'UsageError',
      '--port must be a number',
      'dev',
      inner,
    ]);
    expect(new UsageError('unknown command "x"').command).toBeUndefined();
  });

  it('is the CLI own class, not part of the wire package', async () => {
    expect(Object.keys(await import('@berth/protocol'))).not.toContain('UsageError');
    expect(EXIT.usage).toBe(2);
  });
});
