import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT } from './paths';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotFunction {
  readonly function: string;
  readonly where: string;
  readonly owner: string;
  readonly selfMs: number;
  readonly selfPercent: number;
  /** For native and internal frames: the JavaScript function (outside node internals) that called them most. */
  readonly calledFrom?: string;
}

export interface ProfileSummary {
  readonly file: string;
  readonly sampledMs: number;
  readonly idlePercent: number;
  readonly gcPercent: number;
  readonly byOwner: Record<string, number>;
  readonly top: HotFunction[];
}

/** Self time per function and per owner (ours = dist/, a package, node internals) of a .cpuprofile. */
export function summarizeProfile(file: string, topN = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const callerOf = (id: number): string | undefined => {
    for (let at = parents.get(id); at !== undefined; at = parents.get(at)) {
      const frame = nodes.get(at)!.callFrame;
      if (frame.url && !frame.url.startsWith('node:'))
        return `${frame.functionName || '(anonymous)'} ${shortPath(frame.url)}:${frame.lineNumber + 1}`;
    }
    return undefined;
  };
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const byFunction = new Map<string, { function: string; where: string; owner: string; us: number; callers: Map<string, number> }>();
  const byOwner = new Map<string, number>();
  let total = 0;
  let idle = 0;
  let gc = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    // The profiler's own work (Profiler.stop serialising the profile) is not the service's.
    if (!url && /^(start|stop)Profile bench\//.test(callerOf(id) ?? '')) continue;
    total += us;
    if (functionName === '(idle)') idle += us;
    if (functionName === '(garbage collector)') gc += us;
    const owner = ownerOf(url, functionName);
    const where = url ? `${shortPath(url)}:${lineNumber + 1}` : '';
    const key = `${functionName}@${where}`;
    const entry = byFunction.get(key) ?? {
      function: functionName || '(anonymous)',
      where,
      owner,
      us: 0,
      callers: new Map<string, number>(),
    };
    entry.us += us;
    if (!url || url.startsWith('node:')) {
      const caller = callerOf(id);
      if (caller) entry.callers.set(caller, (entry.callers.get(caller) ?? 0) + us);
    }
    byFunction.set(key, entry);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + us);
  }
  const busy = total - idle;
  const percent = (us: number) => Math.round((1000 * us) / busy) / 10;
  return {
    file: relative(ROOT, file),
    sampledMs: Math.round(total / 1000),
    idlePercent: Math.round((1000 * idle) / total) / 10,
    gcPercent: percent(gc),
    byOwner: Object.fromEntries(
      [...byOwner]
        .filter(([owner]) => owner !== '(idle)')
        .sort((a, b) => b[1] - a[1])
        .map(([owner, us]) => [owner, percent(us)]),
    ),
    top: [...byFunction.values()]
      .filter((entry) => entry.function !== '(idle)')
      .sort((a, b) => b.us - a.us)
      .slice(0, topN)
      .map((entry) => {
        const caller = [...entry.callers].sort((a, b) => b[1] - a[1])[0];
        const hot: HotFunction = {
          function: entry.function,
          where: entry.where,
          owner: entry.owner,
          selfMs: Math.round(entry.us / 1000),
          selfPercent: percent(entry.us),
        };
        return caller ? { ...hot, calledFrom: `${caller[0]} (${Math.round((100 * caller[1]) / entry.us)}%)` } : hot;
      }),
  };
}

function ownerOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (packageMatch) return packageMatch[1];
  if (url.includes('/dist/')) return 'ours (dist)';
  if (url.startsWith('node:')) return 'node internals';
  return 'other';
}

function shortPath(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const inPackage = /node_modules\/(.*)$/.exec(path);
  if (inPackage) return inPackage[1];
  return path.startsWith('/') ? relative(ROOT, path) : path;
}
