// CPU accounting from /proc (Linux): how busy the machine was over a scenario, and how many cores each
// process group used. It tells a service-bound run from a machine-bound one: on a small machine the
// service, the receiver, the database and the driver share the same cores.
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export interface CpuSnapshot {
  readonly at: number;
  readonly machine: { readonly busy: number; readonly total: number };
  readonly ticks: Record<string, number>;
}

export interface CpuUsage {
  /** Share of all the machine's cores that were busy, in percent. */
  readonly machineBusyPercent: number;
  /** Cores used on average by each process group. */
  readonly cores: Record<string, number>;
}

/** Cumulative CPU of the machine and of each named group of pids. */
export function cpuSnapshot(groups: Record<string, readonly number[]>): CpuSnapshot {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const values = fields.map(Number);
  const idle = values[3] + (values[4] ?? 0);
  const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
  const ticks = Object.fromEntries(
    Object.entries(groups).map(([name, pids]) => [name, pids.reduce((sum, pid) => sum + processTicks(pid), 0)]),
  );
  return { at: performance.now(), machine: { busy: total - idle, total }, ticks };
}

export function cpuUsage(before: CpuSnapshot, after: CpuSnapshot): CpuUsage {
  const seconds = (after.at - before.at) / 1000;
  const round2 = (value: number) => Math.round(value * 100) / 100;
  const busy = after.machine.busy - before.machine.busy;
  const total = after.machine.total - before.machine.total;
  const cores = Object.fromEntries(Object.entries(cpuMs(before, after)).map(([name, ms]) => [name, round2(ms / 1000 / seconds)]));
  return { machineBusyPercent: Math.round((busy / Math.max(1, total)) * 100), cores };
}

/** CPU time (ms) each process group used between two snapshots. */
export function cpuMs(before: CpuSnapshot, after: CpuSnapshot): Record<string, number> {
  return Object.fromEntries(
    Object.keys(after.ticks).map((name) => [name, ((after.ticks[name] - (before.ticks[name] ?? 0)) * 1000) / TICKS_PER_SECOND]),
  );
}

/** The database server's pid on this machine (MariaDB or MySQL), if it runs here. */
export function databaseServerPids(): number[] {
  return processPids(/^(mariadbd|mysqld)$/);
}

/** The pids of the processes whose name (`/proc/<pid>/comm`) matches, e.g. PostgreSQL's postmaster and its backends. */
export function processPids(name: RegExp): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return name.test(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
      } catch {
        return false;
      }
    })
    .map(Number);
}

function processTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0; // the process has exited
  }
}
