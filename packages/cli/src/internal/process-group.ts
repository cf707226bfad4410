import type { ChildProcess } from 'node:child_process';

/** Signals a worker: a command worker's whole process group, a Node worker's process. */
export function signalWorker(child: ChildProcess | undefined, group: boolean, sig: NodeJS.Signals): void {
  if (group && killGroup(child?.pid, sig)) return;
  child?.kill(sig);
}

const groups = new Set<number>();
let exitHook = false;

/** Process groups of command workers still to end if berth exits first (they do not get its group's signals). */
export function trackGroup(pid: number): void {
  if (!exitHook) process.once('exit', () => groups.forEach((g) => killGroup(g, 'SIGKILL')));
  exitHook = true;
  groups.add(pid);
}

/** Signals process group `pid`; false when there is none (any more). */
export function killGroup(pid: number | undefined, sig: NodeJS.Signals): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(-pid, sig);
    if (sig === 'SIGKILL') groups.delete(pid);
    return true;
  } catch {
    groups.delete(pid);
    return false;
  }
}
