import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { type BenchContext, checkDelivery, round } from '../lib/context';
import { cpuMs, cpuSnapshot, type CpuUsage, cpuUsage } from '../lib/cpu';
import type { CeilingInput } from '../lib/ceiling-process';
import { IpcChild } from '../lib/ipc';
import type { ReceiverStats } from '../lib/receiver-types';
import { typeOfUser, waitForEvents } from '../lib/workload';

export interface CeilingResult {
  readonly requests: number;
  readonly concurrency: number;
  readonly durationMs: number;
  readonly perSecond: number;
  /** Cores used by the bare loop and by the receiver while it ran, and each one's CPU per request. */
  readonly cpu: CpuUsage & { readonly msPerRequest: { readonly loop: number; readonly receiver: number } };
}

/** Scenario 1: a bare undici loop, same concurrency, body size and signing, same receiver. */
export async function measureCeiling(context: BenchContext, label: string): Promise<CeilingResult> {
  const { users, events: requests, concurrency } = context.size;
  const secrets: [string, string][] = Array.from({ length: users }, (_, i) => [
    `${i + 1}/${typeOfUser(i + 1)}`,
    `whsec_${randomBytes(32).toString('base64url')}`,
  ]);
  await context.receiver.call('setSecrets', secrets);
  await context.receiver.call('reset');
  const child = IpcChild.fork(resolve(__dirname, '../lib/ceiling-process.js'), 'ceiling');
  try {
    await child.ready;
    const input: CeilingInput = { bases: context.bases, caPem: context.caPem, secrets, users, requests, concurrency };
    const pids = { loop: [child.process.pid!], receiver: [context.receiver.process.pid!] };
    const cpuBefore = cpuSnapshot(pids);
    const result = await child.call<{ durationMs: number; perSecond: number }>('run', input);
    const stats = await waitForEvents(context.receiver, requests);
    const cpuAfter = cpuSnapshot(pids);
    checkDelivery(context, label, stats as ReceiverStats, requests);
    const used = cpuMs(cpuBefore, cpuAfter);
    const msPerRequest = (ms: number) => round(ms / requests, 3);
    return {
      requests,
      concurrency,
      durationMs: round(result.durationMs),
      perSecond: round(result.perSecond),
      cpu: { ...cpuUsage(cpuBefore, cpuAfter), msPerRequest: { loop: msPerRequest(used.loop), receiver: msPerRequest(used.receiver) } },
    };
  } finally {
    await child.stop();
  }
}
