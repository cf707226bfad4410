/** CPU time of processes from /proc (Linux), for the overhead benchmark. */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** CPU of one process, µs: the sum of its live threads' run time from schedstat (ns; /proc/<pid>/stat counts
 * 10 ms ticks, too coarse for a figure per token), or utime + stime from stat where schedstat is missing. */
function processUs(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1000;
  } catch {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) * TICK_US; // utime, stime (fields 14, 15)
    } catch {
      return 0; // exited
    }
  }
}

/** CPU of `pids` together, µs (a process gone counts 0; a thread that exited during a phase is not counted). */
export function cpuUs(pids: readonly number[]): number {
  return pids.reduce((us, pid) => us + processUs(pid), 0);
}

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
/** Every process under `pid` (children, theirs, and so on). */
export const descendants = (pid: number): number[] => children(pid).flatMap((c) => [c, ...descendants(c)]);

/**
 * The processes under `root` grouped by which pattern their command line's arguments match (a match and all its
 * descendants, e.g. a worker and the esbuild service tsx starts); throws when a pattern matches nothing.
 */
export function processGroups(root: number, patterns: Record<string, RegExp>): Record<string, number[]> {
  const out: Record<string, Set<number>> = {};
  for (const pid of descendants(root)) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    for (const [name, re] of Object.entries(patterns))
      if (args.some((x) => re.test(x))) for (const p of [pid, ...descendants(pid)]) (out[name] ??= new Set()).add(p);
  }
  return Object.fromEntries(
    Object.keys(patterns).map((name) => {
      if (!out[name]?.size) throw new Error(`no process under ${root} runs ${patterns[name]}`);
      return [name, [...out[name]]];
    }),
  );
}
