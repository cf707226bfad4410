import { statSync, watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * How changes are noticed: `auto` (default) uses file events (`fs.watch`) and also compares each file's stat
 * every second, which catches what events miss (a folder `fs.watch` cannot watch, a network or container mount
 * that delivers no events); `poll` only compares stats (every `pollMs`), never opening a watcher.
 */
export type WatchMode = 'auto' | 'poll';

export interface FileWatcherOptions {
  /** Changes within this many ms are reported together (editors write a file in several steps). Default 150. */
  debounceMs?: number;
  /** Default `auto`. */
  mode?: WatchMode;
  /** How often stats are compared: `poll` mode every `pollMs` (default 500), `auto` every second. */
  pollMs?: number;
  /** `fs.watch`, replaceable by tests to play a mount that gives no events or a watch that throws. */
  watch?: (dir: string, listener: (event: string, name: string | Buffer | null) => void) => FSWatcher;
}

/** What a file looked like at the last look: its stat fields that change on a write, or `missing`. */
function signature(file: string): string {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch {
    return 'missing';
  }
}

/**
 * Watches files (through one non-recursive watcher per folder, so a big node_modules next to them costs
 * nothing) and calls `onChange` with the absolute paths changed, at most once per `debounceMs`. `update` swaps
 * the set of files watched.
 *
 * @example const w = new FileWatcher((files) => console.log(files)); w.update(['/app/handler.ts']);
 */
export class FileWatcher {
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #pending = new Set<string>();
  /** Each watched file's signature when last seen, so an event and the poll never report one write twice. */
  readonly #seen = new Map<string, string>();
  readonly #o: Required<Omit<FileWatcherOptions, 'watch'>> & { watch: FileWatcherOptions['watch'] | undefined };
  #timer: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;

  constructor(
    private readonly onChange: (files: string[]) => void,
    options: FileWatcherOptions = {},
  ) {
    const mode = options.mode ?? 'auto';
    this.#o = {
      debounceMs: options.debounceMs ?? 150,
      mode,
      pollMs: options.pollMs ?? (mode === 'poll' ? 500 : 1000),
      watch: options.watch,
    };
  }

  update(files: Iterable<string>): void {
    const next = new Set(files);
    for (const f of this.#seen.keys()) if (!next.has(f)) this.#seen.delete(f);
    for (const f of next) if (!this.#seen.has(f)) this.#seen.set(f, signature(f));
    if (!this.#poll) {
      this.#poll = setInterval(() => this.#compare(), this.#o.pollMs);
      this.#poll.unref();
    }
    if (this.#o.mode === 'poll') return;
    const dirs = new Set([...next].map((f) => dirname(f)));
    for (const [dir, w] of this.#watchers) {
      if (!dirs.has(dir)) {
        w.close();
        this.#watchers.delete(dir);
      }
    }
    for (const dir of dirs) {
      if (this.#watchers.has(dir)) continue;
      try {
        const listener = (_event: string, name: string | Buffer | null) =>
          name && this.#event(join(dir, name.toString()));
        const w = this.#o.watch ? this.#o.watch(dir, listener) : watch(dir, listener);
        w.on('error', () => {
          w.close();
          this.#watchers.delete(dir);
        });
        this.#watchers.set(dir, w);
      } catch {
        // A folder that cannot be watched (too many watches, a mount without events): the poll covers it.
      }
    }
  }

  /** A file event on a watched file: reported, and its stat noted so the poll does not report it again. */
  #event(file: string): void {
    if (!this.#seen.has(file)) return;
    this.#seen.set(file, signature(file));
    this.#changed(file);
  }

  /** The poll: every watched file whose stat changed since last seen (by an event or the previous poll). */
  #compare(): void {
    for (const [file, before] of this.#seen) {
      const now = signature(file);
      if (now === before) continue;
      this.#seen.set(file, now);
      this.#changed(file);
    }
  }

  #changed(file: string): void {
    this.#pending.add(file);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      const files = [...this.#pending];
      this.#pending.clear();
      this.onChange(files);
    }, this.#o.debounceMs);
  }

  close(): void {
    clearTimeout(this.#timer);
    clearInterval(this.#poll);
    this.#poll = undefined;
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }
}
