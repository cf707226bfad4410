import { describe, expect, it } from 'vitest';
import { parseEndpointList, parseLogLevel, parsePort } from './args.js';
import { main } from './cli.js';
import { parseDevArgs } from './commands/dev.js';
import { parseServeArgs } from './commands/serve.js';
import { captureIo } from './internal/run-berth.test-helpers.js';
import { UsageError } from './internal/usage-error.js';

describe('parseDevArgs', () => {
  it('defaults', () => {
    expect(parseDevArgs([], {})).toMatchObject({
      help: false,
      config: undefined,
      port: 8080,
      host: '127.0.0.1',
      logLevel: 'info',
      watch: true,
    });
    expect(parseDevArgs(['--no-watch'], {}).watch).toBe(false);
  });

  it('--watch-poll or BERTH_WATCH_POLL=1: hot reload by stat polling; anything but 1 or 0 is a usage error', () => {
    expect(parseDevArgs([], {}).watchMode).toBe('auto');
    expect(parseDevArgs(['--watch-poll'], {}).watchMode).toBe('poll');
    expect(parseDevArgs([], { BERTH_WATCH_POLL: '1' }).watchMode).toBe('poll');
    expect(parseDevArgs([], { BERTH_WATCH_POLL: '0' }).watchMode).toBe('auto');
    expect(() => parseDevArgs([], { BERTH_WATCH_POLL: 'yes' })).toThrow('BERTH_WATCH_POLL must be 1 or 0 (got "yes")');
  });

  it('long and short flags, --flag=value', () => {
    expect(parseDevArgs(['-c', 'x.json', '--port=0', '--host', '0.0.0.0', '--log-level', 'debug'], {})).toMatchObject({
      help: false,
      config: 'x.json',
      port: 0,
      host: '0.0.0.0',
      logLevel: 'debug',
    });
    expect(parseDevArgs(['-p', '9000'], {}).port).toBe(9000);
    expect(parseDevArgs(['-h'], {}).help).toBe(true);
  });

  it('BERTH_LOG_LEVEL is the default of --log-level', () => {
    expect(parseDevArgs([], { BERTH_LOG_LEVEL: 'warn' }).logLevel).toBe('warn');
    expect(parseDevArgs(['--log-level', 'error'], { BERTH_LOG_LEVEL: 'warn' }).logLevel).toBe('error');
  });

  it.each([
    [['--prot', '1'], /Unknown option '--prot'/],
    [['extra'], /Unexpected argument 'extra'/],
    [['--port'], /--port/],
    [['--port=-1'], /--port must be a whole number from 0 to 65535 \(got "-1"\)/],
    [['--port', '65536'], /--port must be a whole number/],
    [['--port', '80.5'], /--port must be a whole number/],
    [['--host', ' '], /--host must not be empty/],
    [['--log-level', 'loud'], /--log-level must be one of debug, info, warn, error, silent \(got "loud"\)/],
  ])('%j is a usage error', (argv, message) => {
    expect(() => parseDevArgs(argv, {})).toThrow(UsageError);
    expect(() => parseDevArgs(argv, {})).toThrow(message);
  });
});

describe('parseServeArgs', () => {
  it('--endpoint: comma-separated and repeated, duplicates dropped', () => {
    expect(parseServeArgs(['--endpoint', 'a,b', '-e', 'c', '--endpoint', 'a'], {}).endpoints).toEqual(['a', 'b', 'c']);
    expect(parseServeArgs([], {}).endpoints).toEqual([]);
  });

  it('refuses an invalid endpoint id', () => {
    expect(() => parseServeArgs(['--endpoint', 'ok,Not_OK'], {})).toThrow(/"Not_OK" is not a valid endpoint id/);
  });

  it('takes an optional --config (endpoints and public models, no workers)', () => {
    expect(parseServeArgs([], {}).config).toBeUndefined();
    expect(parseServeArgs(['--config', 'x.json'], {}).config).toBe('x.json');
    expect(parseServeArgs(['-c', 'y.json'], {}).config).toBe('y.json');
  });
});

describe('small parsers', () => {
  it('parsePort', () => {
    expect(parsePort('dev', undefined, 8080)).toBe(8080);
    expect(parsePort('dev', '0', 8080)).toBe(0);
    expect(() => parsePort('dev', '', 8080)).toThrow(UsageError);
  });
  it('parseEndpointList ignores empty items', () => {
    expect(parseEndpointList('serve', ['a,,b, '])).toEqual(['a', 'b']);
  });
  it('parseLogLevel names the env var when it is the source', () => {
    expect(() => parseLogLevel('dev', undefined, { BERTH_LOG_LEVEL: 'x' })).toThrow(/BERTH_LOG_LEVEL must be one of/);
  });
});

describe('main', () => {
  it('--help: exit 0, commands listed', async () => {
    const f = captureIo();
    expect(await main(['--help'], f.io)).toBe(0);
    expect(f.out()).toMatch(/Commands:\n {2}dev .*\n {2}serve /);
  });

  it("help <command> prints that command's help", async () => {
    const f = captureIo();
    expect(await main(['help', 'serve'], f.io)).toBe(0);
    expect(f.out()).toMatch(/^Usage: berth serve/);
  });

  it('--version / -v', async () => {
    const f = captureIo();
    expect(await main(['-v'], f.io)).toBe(0);
    expect(f.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it('unknown command: exit 2 and a pointer to --help', async () => {
    const f = captureIo();
    expect(await main(['nope'], f.io)).toBe(2);
    expect(f.err()).toMatch(/berth: unknown command "nope" \(commands: dev, serve, [a-z, ]*\btest, build\b/);
    expect(f.err()).toContain('berth --help');
  });

  it('a flag before the command: exit 2', async () => {
    const f = captureIo();
    expect(await main(['--port', '1'], f.io)).toBe(2);
    expect(f.err()).toContain('unknown option "--port"');
  });

  it("unknown flag of a command: exit 2 and a pointer to that command's --help", async () => {
    const f = captureIo();
    expect(await main(['dev', '--nope'], f.io)).toBe(2);
    expect(f.err()).toMatch(/Unknown option '--nope'/);
    expect(f.err()).toContain('berth dev --help');
  });

  it('dev without a config file: exit 2, says where it looked', async () => {
    const f = captureIo();
    expect(await main(['dev'], f.io)).toBe(2);
    expect(f.err()).toMatch(/no config file found in \/nonexistent/);
  });
});
