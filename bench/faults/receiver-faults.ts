import { sleep } from '../lib/clock';
import type { DatabaseServer } from '../lib/databases';
import type { ReceivedAttempt, ReceiverStats } from '../lib/receiver-types';
import { type MainProcess, startMainProcess } from '../lib/services';
import { benchEvents, enableWebhooks, publishViaHttp } from '../lib/workload';
import { type AttemptsByEvent, deliveryRows, receivedAttempts, startFaultRun } from './fault-kit';

// Spec 6.3; the harness states the schedule itself rather than importing it, so a change in the service is caught.
const RETRY_DELAYS_MS = [60_000, 5 * 60_000, 15 * 60_000, 60 * 60_000, 4 * 60 * 60_000];
const ATTEMPT_DEADLINE_MS = 5000;
/** The minute scheduler picks a due retry up at the next minute boundary. */
const SCHEDULER_PERIOD_MS = 60_000;
const SLACK_MS = 3000;

export const RECEIVER_FAULTS = { error500: 0.1, hang: 0.05, reset: 0.05, redirect302: 0.02 };

export interface ReceiverFaultsSize {
  readonly users: number;
  readonly events: number;
}

/**
 * One run with 10% 500s, 5% hangs past the 5 s deadline, 5% connection resets and 2% 302s, through the
 * first attempts and the first retry round of the real minute scheduler. Then, per event: delivered,
 * or pending with its next attempt on the schedule; no attempt number twice; no retry sooner than its delay.
 */
export async function receiverFaults(server: DatabaseServer, size: ReceiverFaultsSize) {
  const run = await startFaultRun(server, 'receiver-faults', RECEIVER_FAULTS);
  let instance: MainProcess | undefined;
  try {
    instance = await startMainProcess({ database: run.database.env, caFile: run.caFile }, run.logDir, 'instance');
    await run.receiver.call('setSecrets', await enableWebhooks(instance.base, size.users, run.bases));
    const queued = await publishViaHttp([instance.base], benchEvents(0, size.events, size.users), 200);
    let attempts = await waitUntil(run, (all) => all.size >= queued, 120_000);
    await sleep(ATTEMPT_DEADLINE_MS + SLACK_MS);
    attempts = await receivedAttempts(run.receiver);
    const firstFailures = [...attempts.values()].filter((list) => list[0].behaviour !== 'ok');
    const lastFirstFailure = Math.max(0, ...firstFailures.map((list) => list[0].at));
    const retryDeadline = lastFirstFailure + ATTEMPT_DEADLINE_MS + RETRY_DELAYS_MS[0] + SCHEDULER_PERIOD_MS + SLACK_MS;
    run.log(
      `${attempts.size} events had a first attempt, ${firstFailures.length} failed; waiting for the retry round (until ${new Date(retryDeadline).toISOString().slice(11, 19)})`,
    );
    attempts = await waitUntil(
      run,
      (all) => [...all.values()].every((list) => list[0].behaviour === 'ok' || list.length >= 2),
      retryDeadline - Date.now(),
    );
    await sleep(ATTEMPT_DEADLINE_MS + SLACK_MS);
    attempts = await receivedAttempts(run.receiver);
    const checkedAt = Date.now();
    const rows = new Map((await deliveryRows(run.database)).map((row) => [row.eventId, row]));
    // answeredLate: the receiver answered 200 after the service's deadline, so the service rightly retries it.
    const outcome = {
      delivered: 0,
      pendingOnSchedule: 0,
      answeredLate: 0,
      badSignatures: 0,
      neverAttempted: 0,
      attemptsByNumber: {} as Record<number, number>,
    };
    for (const [eventId, row] of rows) {
      const list = (attempts.get(eventId) ?? []).slice().sort((a, b) => a.at - b.at);
      const problem = (message: string) =>
        run.problems.length < 20 &&
        run.problems.push(`event ${eventId}: ${message} (${describe(list)}; stored ${row.status}, ${row.attemptCount} attempts)`);
      if (list.length === 0) {
        outcome.neverAttempted++;
        problem('never attempted');
        continue;
      }
      outcome.badSignatures += list.filter((attempt) => !attempt.validSignature).length;
      for (const attempt of list) outcome.attemptsByNumber[attempt.attempt] = (outcome.attemptsByNumber[attempt.attempt] ?? 0) + 1;
      list.forEach((attempt, i) => {
        if (attempt.attempt !== i + 1) problem(`request ${i + 1} carried attempt number ${attempt.attempt}`);
        if (i > 0 && attempt.at - list[i - 1].at < RETRY_DELAYS_MS[i - 1] - SLACK_MS)
          problem(`attempt ${i + 1} came ${Math.round(attempt.at - list[i - 1].at)} ms after attempt ${i}, sooner than the schedule`);
      });
      const last = list[list.length - 1];
      if (row.attemptCount !== list.length) problem(`the receiver saw ${list.length} requests but ${row.attemptCount} attempts are stored`);
      if (row.status === 'DELIVERED') {
        if (last.behaviour === 'ok') outcome.delivered++;
        else problem(`stored as DELIVERED although the receiver answered ${last.behaviour}`);
        continue;
      }
      if (last.behaviour === 'ok') outcome.answeredLate++;
      const delay = RETRY_DELAYS_MS[list.length - 1];
      const next = row.nextAttemptAt;
      if (row.status !== 'PENDING' || next === null) problem('failed and not PENDING with a next attempt');
      else if (next < last.at + delay - SLACK_MS || next > last.at + ATTEMPT_DEADLINE_MS + delay + SLACK_MS)
        problem(`next attempt at ${new Date(next).toISOString()} is off the ${delay / 60_000} min schedule`);
      else if (next < checkedAt - SCHEDULER_PERIOD_MS - SLACK_MS) problem('overdue: the scheduler did not pick it up');
      else outcome.pendingOnSchedule++;
    }
    if (outcome.badSignatures > 0) run.problems.push(`${outcome.badSignatures} bad signatures`);
    const unknown = [...attempts.keys()].filter((eventId) => !rows.has(eventId)).length;
    if (unknown > 0) run.problems.push(`${unknown} event ids received that have no delivery row`);
    if (rows.size !== queued) run.problems.push(`${queued} deliveries queued but ${rows.size} stored`);
    const { answered } = await run.receiver.call<ReceiverStats>('stats');
    return {
      scenario: 'receiver faults: 10% 500, 5% hang > 5 s, 5% reset, 2% 302',
      events: size.events,
      queued,
      answered,
      ...outcome,
      problems: run.problems,
    };
  } finally {
    await instance?.stop();
    await run.close();
  }
}

async function waitUntil(
  run: { receiver: import('../lib/ipc').IpcChild },
  done: (attempts: AttemptsByEvent) => boolean,
  timeoutMs: number,
): Promise<AttemptsByEvent> {
  const deadline = Date.now() + Math.max(0, timeoutMs);
  for (;;) {
    const attempts = await receivedAttempts(run.receiver);
    if (done(attempts) || Date.now() > deadline) return attempts;
    await sleep(1000);
  }
}

function describe(list: readonly ReceivedAttempt[]): string {
  return (
    list.map((attempt) => `#${attempt.attempt} ${attempt.behaviour} @${new Date(attempt.at).toISOString().slice(14, 23)}`).join(', ') ||
    'no request'
  );
}
