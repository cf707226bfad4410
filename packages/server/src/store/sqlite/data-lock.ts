import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One control plane per database file: `<file>.lock` holds the owner's pid. A lock left by a process that no longer
 * exists (kill -9, a crash) is taken over; a live owner is refused with a message naming it.
 */
export class DataLock {
  private constructor(private readonly path: string) {}

  static acquire(dbFile: string): DataLock {
    const path = `${dbFile}.lock`;
    for (let tries = 0; tries < 3; tries++) {
      try {
        const fd = openSync(path, 'wx');
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return new DataLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const owner = Number(readFileSync(path, 'utf8').trim());
        if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) {
          throw new Error(`${dbFile} is in use by another Berth control plane (pid ${owner}); stop it or use another --data-dir`);
        }
        rmSync(path, { force: true }); // stale: its owner is gone
      }
    }
    throw new Error(`could not lock ${dbFile}`);
  }

  release(): void {
    rmSync(this.path, { force: true });
  }
}
