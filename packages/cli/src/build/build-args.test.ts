import { describe, expect, it } from 'vitest';
import { parseBuildArgs } from '../commands/build.js';

describe('berth build flags', () => {
  it('--base-image and --arch', () => {
    expect(parseBuildArgs(['--base-image', 'node:24-bookworm-slim', '--arch', 'arm64'])).toMatchObject({
      baseImage: 'node:24-bookworm-slim',
      arch: 'arm64',
    });
    expect(parseBuildArgs([]).arch).toBe(process.arch === 'arm64' ? 'arm64' : 'x64');
    expect(parseBuildArgs([]).baseImage).toBeUndefined();
  });

  it('refuses an unknown architecture and an image reference with spaces', () => {
    expect(() => parseBuildArgs(['--arch', 'ia32'])).toThrow('--arch must be x64 or arm64 (got "ia32")');
    expect(() => parseBuildArgs(['--base-image', 'node:22 AS x'])).toThrow(/--base-image must be an image reference/);
  });
});
