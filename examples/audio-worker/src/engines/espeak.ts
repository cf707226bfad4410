import { runProcess } from '../run-process.js';
import { fixWavSizes } from '../wav.js';
import type { SpeechEngine, SpeechRequest } from './engine.js';

/** Options of `createEspeakEngine`. */
export interface EspeakOptions {
  /** The binary. Default `$ESPEAK_NG_BIN`, else `espeak-ng` on the PATH. */
  command?: string;
  /** Default `en-us`. */
  defaultVoice?: string;
}

/** espeak-ng's words per minute at speed 1. */
const BASE_WPM = 175;

/**
 * Text-to-speech with Debian's `espeak-ng`, run as a child process per job (text on stdin, WAV on stdout, 22050 Hz
 * mono 16-bit). Voices are espeak-ng language codes (`en-us`, `fr`, `de`, ...) with an optional `+variant`
 * (`en-us+f3`); `speed` maps to words per minute (175 x speed), `pitch` to `-p`.
 *
 * @example const wav = await createEspeakEngine().synthesize({ text: 'Hello', speed: 1, pitch: 50 }, signal);
 */
export function createEspeakEngine(options: EspeakOptions = {}): SpeechEngine {
  const command = options.command ?? process.env['ESPEAK_NG_BIN'] ?? 'espeak-ng';
  let voices: Promise<{ languages: Map<string, Cell>; variants: Map<string, Cell> }> | undefined;
  const listVoices = () => {
    voices ??= Promise.all([runProcess(command, ['--voices']), runProcess(command, ['--voices=variant'])]).then(
      ([l, v]) => ({
        languages: table(l.toString('utf8'), (c) => ({ name: c[1], file: c[4] })),
        variants: table(v.toString('utf8'), (c) => ({
          name: c[4]?.replace(/^!v\//, ''),
          file: c[4]?.replace(/^!v\//, ''),
        })),
      }),
    );
    voices.catch(() => (voices = undefined));
    return voices;
  };
  return {
    name: 'espeak-ng',
    defaultVoice: options.defaultVoice ?? 'en-us',
    async checkVoice(voice) {
      const { languages, variants } = await listVoices();
      const [lang = '', variant, ...rest] = voice.split('+');
      const l = languages.get(lang.toLowerCase());
      if (!l)
        return {
          ok: false,
          problem: `unknown voice "${lang.slice(0, 40)}" (espeak-ng languages include ${sample(languages)})`,
        };
      if (rest.length) return { ok: false, problem: `at most one "+variant" (got "${voice.slice(0, 40)}")` };
      if (variant === undefined) return { ok: true, voice: l.name, engineVoice: l.file };
      const v = variants.get(variant.toLowerCase());
      if (!v)
        return {
          ok: false,
          problem: `unknown voice variant "${variant.slice(0, 40)}" (variants include ${sample(variants)})`,
        };
      // The voice file, not the language code: espeak-ng ignores a variant after some codes ("en-gb+f3").
      return { ok: true, voice: `${l.name}+${v.name}`, engineVoice: `${l.file}+${v.file}` };
    },
    async synthesize(req: SpeechRequest, signal: AbortSignal) {
      const args = [
        '-v',
        req.engineVoice ?? req.voice ?? options.defaultVoice ?? 'en-us',
        '-s',
        String(Math.round(BASE_WPM * req.speed)),
        '-p',
        String(req.pitch),
        '--stdout',
      ];
      // The text goes on stdin: never parsed as options, no length limit of the command line.
      const wav = await runProcess(command, args, { stdin: req.text, signal });
      return fixWavSizes(wav);
    },
  };
}

interface Cell {
  name: string;
  file: string;
}

/** Lowercased name -> name and voice file, from `espeak-ng --voices` output (header line skipped). */
function table(
  text: string,
  pick: (cells: string[]) => { name: string | undefined; file: string | undefined },
): Map<string, Cell> {
  const out = new Map<string, Cell>();
  for (const line of text.split('\n').slice(1)) {
    const { name, file } = pick(line.trim().split(/\s+/));
    if (name && file) out.set(name.toLowerCase(), { name, file });
  }
  return out;
}

function sample(cells: Map<string, Cell>): string {
  const names = new Map([...cells].map(([k, c]) => [k, c.name]));
  const all = [...names.values()];
  const preferred = ['en-us', 'en-gb', 'fr-fr', 'de', 'es', 'f3', 'm3', 'klatt', 'whisper'].filter((n) => names.has(n));
  return `${[...new Set([...preferred, ...all])]
    .slice(0, 8)
    .map((n) => `"${n}"`)
    .join(', ')}, ... (${all.length} in all)`;
}
