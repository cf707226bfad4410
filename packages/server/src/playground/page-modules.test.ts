// The playground's pure browser modules (output shapes, snippets), run in Node: media and text detection, and the
// generated code checked by a real shell and a real Python.
import { execFileSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { PLAYGROUND_DIR } from './static.js';

// Plain JS modules without types: loaded by URL so the type-checker does not need declarations for them.
let output: any;
let snippets: any;
beforeAll(async () => {
  (globalThis as { location?: unknown }).location = { href: 'http://127.0.0.1:8080/' };
  output = await import(/* @vite-ignore */ `${PLAYGROUND_DIR}output.js`);
  snippets = await import(/* @vite-ignore */ `${PLAYGROUND_DIR}snippets.js`);
});

const has = (cmd: string) => {
  try {
    execFileSync('which', [cmd]);
    return true;
  } catch {
    return false;
  }
};

describe('output.js', () => {
  it('chunkText: strings, {text}, {token}, {output}, OpenAI chat and completion chunks', () => {
    const { chunkText } = output;
    expect(
      [
        'a',
        { index: 0, text: 'b' },
        { token: 'c' },
        { token: { text: 'd' } },
        { output: 'e' },
        { choices: [{ delta: { content: 'f' } }] },
        { choices: [{ text: 'g' }] },
        { other: 1 },
        null,
      ]
        .map(chunkText)
        .join(''),
    ).toBe('abcdefg');
  });

  it('outputText: the text worker, strings, chunk lists, OpenAI completions; undefined for images', () => {
    const { outputText } = output;
    expect(outputText({ text: ['Once upon'], input_tokens: 3, output_tokens: 2 })).toBe('Once upon');
    expect(outputText('plain')).toBe('plain');
    expect(
      outputText([
        { index: 0, text: 'chunk 0' },
        { index: 1, text: 'chunk 1' },
      ]),
    ).toBe('chunk 0chunk 1');
    expect(outputText({ choices: [{ message: { role: 'assistant', content: 'hi' } }] })).toBe('hi');
    expect(outputText({ image_url: 'http://x/files/a.png', cost: 1 })).toBeUndefined();
    expect(outputText({ hello: 'world' })).toBeUndefined();
  });

  it('findMedia: image/audio/video URLs, data URLs, bare base64 images, animated WebP clips as images', () => {
    const { findMedia } = output;
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...new Array(60).fill(0)]).toString(
      'base64',
    );
    expect(findMedia({ image_url: 'http://h/files/a.png?sig=1' })).toEqual([
      { kind: 'image', src: 'http://h/files/a.png?sig=1', label: 'image_url' },
    ]);
    expect(findMedia({ audio_url: 'https://s3/x.mp3' })[0].kind).toBe('audio');
    expect(findMedia({ video_url: 'http://h/files/v.mp4?expires=1' })[0].kind).toBe('video');
    expect(findMedia({ video_url: 'http://h/files/v.webp?expires=1' })[0].kind).toBe('image');
    expect(
      findMedia({ images: [`data:image/jpeg;base64,${png}`, png] }).map((m: { kind: string; src: string }) => [
        m.kind,
        m.src.slice(0, 22),
      ]),
    ).toEqual([
      ['image', 'data:image/jpeg;base64'],
      ['image', 'data:image/png;base64,'],
    ]);
    expect(findMedia({ text: ['no media here'], url: 'http://h/page' })).toEqual([]);
    expect(findMedia({ image: 'javascript:alert(1)' })).toEqual([]);
  });
});

describe('snippets.js', () => {
  const input = {
    prompt: 'it\'s a "test" $HOME `x`',
    n: 2,
    ok: true,
    none: null,
    list: [1.5, 'a'],
    nested: { deep: false },
  };
  const origin = 'http://127.0.0.1:8080';

  it('never contains a key, always the BERTH_API_KEY placeholder; all five languages, /run and /runsync', () => {
    for (const [lang] of snippets.LANGUAGES) {
      const code = snippets.snippets(lang, origin, 'echo', input);
      for (const op of ['run', 'runsync']) {
        expect(code[op], `${lang} ${op}`).toContain('BERTH_API_KEY');
        expect(code[op], `${lang} ${op}`).toContain(`${origin}/v2`);
      }
    }
    expect(snippets.snippets('sdk', origin, 'echo', input).runsync).toContain(
      `runpodSdk(process.env.BERTH_API_KEY, { baseUrl: '${origin}/v2' }).endpoint('echo')`,
    );
    expect(snippets.snippets('client', origin, 'echo', input).run).toContain(
      `createClient({ baseUrl: '${origin}/v2', apiKey: process.env.BERTH_API_KEY });\nconst endpoint = berth.endpoint('echo');`,
    );
  });

  it.skipIf(!has('sh'))('curl: the shell passes the body through unchanged, quotes and $ included', () => {
    const { runsync, run } = snippets.snippets('curl', origin, 'echo', input);
    for (const code of [
      runsync,
      run
        .split('\n')
        .slice(0, 4)
        .join('\n')
        .replace(/^ID=\$\(/, ''),
    ]) {
      // A stand-in `curl` that prints its arguments one per line (NUL-free JSON has no newlines).
      const args = execFileSync(
        'sh',
        ['-c', `curl() { for a; do printf '%s\\n' "$a"; done; }\n${code.replace(/ \| sed .*$/, '')}`],
        { env: { BERTH_API_KEY: 'k', PATH: process.env['PATH'] ?? '' }, encoding: 'utf8' },
      ).split('\n');
      expect(args).toContain('Authorization: Bearer k');
      expect(JSON.parse(args[args.indexOf('-d') + 1]!)).toEqual({ input });
    }
  });

  it.skipIf(!has('python3'))('Python: the payload literal is the same value', () => {
    const code: string = snippets.snippets('python', origin, 'echo', input).runsync;
    const literal = code.slice(code.indexOf('payload = '), code.indexOf('\nprint('));
    const out = execFileSync('python3', ['-c', `import json\n${literal}\nprint(json.dumps(payload))`], {
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual(input);
  });

  it.each([
    ['fetch', ';\nconst res'],
    ['client', ';\nconsole.log'],
  ])('JavaScript (%s): the input literal evaluates to the same value', (lang, end) => {
    const code: string = snippets.snippets(lang, origin, 'echo', input).runsync;
    const literal = code.slice(code.indexOf('const input = ') + 'const input = '.length, code.indexOf(end));
    expect(new Function(`return (${literal});`)()).toEqual(input);
  });
});

describe('validate.js and progress.js', () => {
  let validate: any;
  let progress: any;
  beforeAll(async () => {
    validate = await import(/* @vite-ignore */ `${PLAYGROUND_DIR}validate.js`);
    progress = await import(/* @vite-ignore */ `${PLAYGROUND_DIR}progress.js`);
  });

  it('validateInput: required (unless defaulted), lengths, ranges, whole numbers, enums; null is left out', async () => {
    const { z } = await import('zod');
    const schema = z.toJSONSchema(
      z.strictObject({
        prompt: z.string().min(1).max(10),
        steps: z.number().int().min(1).max(50).default(20),
        guidance: z.number().min(0).max(30).optional(),
        format: z.enum(['png', 'jpeg']).default('png'),
        note: z.string().nullable().optional(),
      }),
      { io: 'input' },
    );
    const { validateInput, problemText } = validate;
    expect(validateInput(schema, { prompt: 'a cat' })).toEqual([]);
    expect(validateInput(schema, { prompt: 'a cat', note: null })).toEqual([]);
    expect(problemText(validateInput(schema, { prompt: '' }))).toBe('prompt: is required');
    expect(
      problemText(validateInput(schema, { prompt: 'x'.repeat(11), steps: 2.5, guidance: 31, format: 'gif' })),
    ).toBe(
      'prompt: must be at most 10 characters; steps: must be a whole number; guidance: must be at most 30; format: must be one of "png", "jpeg"',
    );
    expect(validateInput(undefined, { anything: 1 })).toEqual([]);
  });

  it('progressParts: percent, step of total, other fields as a label; elapsed and waiting texts', () => {
    const { progressParts, elapsedText, waitingText } = progress;
    expect(progressParts({ stage: 'denoise', step: 12, of: 20 })).toEqual({
      percent: 60,
      label: 'denoise · step 12 of 20 · 60%',
    });
    expect(progressParts({ percent: 42 })).toEqual({ percent: 42, label: '42%' });
    expect(progressParts({ step: 'thinking' })).toEqual({ percent: undefined, label: 'step thinking' });
    expect(progressParts('loading')).toEqual({ label: 'loading' });
    expect(progressParts(undefined)).toEqual({ label: '–' });
    expect(elapsedText(4200)).toBe('4.2 s');
    expect(elapsedText(65_000)).toBe('1 min 5 s');
    expect(waitingText({ idle: 0, running: 0, initializing: 1 })).toMatch(/^Cold start: a worker is starting/);
    expect(waitingText({ idle: 0, running: 0, initializing: 0 })).toMatch(
      /^Waiting for a worker: none is connected yet/,
    );
    expect(waitingText({ idle: 0, running: 2, initializing: 0 })).toBe('Waiting for a free worker: 2 busy.');
    expect(waitingText({ idle: 0, running: 0, initializing: 0, unhealthy: 1 })).toMatch(
      /^No worker can take it: the handler failed to load/,
    );
  });
});
