import { watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * Watches files (through one non-recursive watcher per folder, so a big node_modules next to them costs
 * nothing) and calls `onChange` with the absolute paths changed, at most once per `debounceMs` (editors write a
 * file in several steps). `update` swaps the set of files watched.
 *
 * @example const w = new FileWatcher((files) => console.log(files)); w.update(['/app/handler.ts']);
 */
export class FileWatcher {
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #pending = new Set<string>();
  #files = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly onChange: (files: string[]) => void,
    private readonly debounceMs = 150,
  ) {}

  update(files: Iterable<string>): void {
    this.#files = new Set(files);
    const dirs = new Set([...this.#files].map((f) => dirname(f)));
    for (const [dir, w] of this.#watchers) {
      if (!dirs.has(dir)) {
        w.close();
        this.#watchers.delete(dir);
      }
    }
    for (const dir of dirs) {
      if (this.#watchers.has(dir)) continue;
      try {
        const w = watch(dir, (_event, name) => name && this.#changed(join(dir, name.toString())));
        w.on('error', () => {
          w.close();
          this.#watchers.delete(dir);
        });
        this.#watchers.set(dir, w);
      } catch {
        // A folder that cannot be watched (gone, or too many watches): its files just do not hot reload.
      }
    }
  }

  #changed(file: string): void {
    if (!this.#files.has(file)) return;
    this.#pending.add(file);
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      const files = [...this.#pending];
      this.#pending.clear();
      this.onChange(files);
    }, this.debounceMs);
  }

  close(): void {
    clearTimeout(this.#timer);
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }
}
