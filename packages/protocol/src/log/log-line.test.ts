// Pretty log lines are printed on a terminal: a handler's text must not reach it as control characters.
import { describe, expect, it } from 'vitest';
import { createLogger } from './create-logger.js';
import { parseJsonLogLine, prettyLine } from './log-line.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const CONTROL = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('prettyLine', () => {
  it('escapes ESC, CR, BEL, C1 and bidi controls in the message, field values and field keys', () => {
    const hostile = 'ok\x1b]0;pwned\x07\x1b[2J\rfake line\x9b31m\u202eevil';
    const line = prettyLine('info', 0, { out: 'a\x1b[31mred', [`k\x1b[1m`]: 1, text: 'two words\r' }, hostile, false);
    expect(line).not.toMatch(CONTROL);
    expect(line).toBe(
      '00:00:00 info  ok\\u001b]0;pwned\\u0007\\u001b[2J\\rfake line\\u009b31m\\u202eevil ' +
        'out=a\\u001b[31mred k\\u001b[1m=1 text="two words\\r"',
    );
  });

  it('keeps newlines as \\n (CRLF too), tabs and ordinary text as they are', () => {
    expect(prettyLine('warn', 0, undefined, 'a\r\nb\nc\td é 日本', false)).toBe('00:00:00 warn  a\\nb\\nc\td é 日本');
  });

  it("colored lines keep the logger's own colors and only those", () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'info', format: 'pretty', color: true, write: (l) => lines.push(l) });
    log.info('\x1b[8mhidden', { v: '\x1b[0m' });
    const ESC = '\x1b';
    expect(lines[0]?.slice(lines[0].indexOf(' ') + 1)).toBe(
      `${ESC}[36minfo ${ESC}[39m \\u001b[8mhidden ${ESC}[2mv=\\u001b[0m${ESC}[22m\n`,
    );
  });

  it('JSON lines stay exact: the text read back is the text logged', () => {
    const lines: string[] = [];
    createLogger({ level: 'info', format: 'json', write: (l) => lines.push(l) }).info('a\x1b[2J\r\x07\x9b', {
      v: '\x1b',
    });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON.stringify escapes every C0 control
    expect(lines[0]!.trimEnd()).not.toMatch(/[\x00-\x1f]/);
    expect(parseJsonLogLine(lines[0]!.trimEnd())).toMatchObject({ msg: 'a\x1b[2J\r\x07\x9b', fields: { v: '\x1b' } });
  });
});
