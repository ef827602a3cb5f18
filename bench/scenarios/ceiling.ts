import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { type BenchContext, checkDelivery, round } from '../lib/context';
import type { CeilingInput } from '../lib/ceiling-process';
import { IpcChild } from '../lib/ipc';
import type { ReceiverStats } from '../lib/receiver-types';
import { typeOfUser, waitForEvents } from '../lib/workload';

export interface CeilingResult {
  readonly requests: number;
  readonly concurrency: number;
  readonly durationMs: number;
  readonly perSecond: number;
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
    const result = await child.call<{ durationMs: number; perSecond: number }>('run', input);
    const stats = await waitForEvents(context.receiver, requests);
    checkDelivery(context, label, stats as ReceiverStats, requests);
    return { requests, concurrency, durationMs: round(result.durationMs), perSecond: round(result.perSecond) };
  } finally {
    await child.stop();
  }
}
