import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { PausableTcpProxy } from '../../test/support/pausable-tcp-proxy';
import { sleep, wallMs } from '../lib/clock';
import type { DatabaseServer } from '../lib/databases';
import { type MainProcess, INTERNAL_TOKEN, startMainProcess } from '../lib/services';
import { benchEvent, enableWebhooks } from '../lib/workload';
import {
  type AttemptsByEvent,
  checkAllDelivered,
  duplicatesOf,
  missingSeqs,
  receivedAttempts,
  startFaultRun,
  waitForAllDelivered,
} from './fault-kit';

export interface HungDatabaseSize {
  readonly users: number;
  /** Publishing before the hang, during it and after it, in ms. */
  readonly beforeMs: number;
  readonly hangMs: number;
  readonly afterMs: number;
  /** Concurrent publishers, each posting `batchSize` events every `intervalMs` (or as soon as its previous call answers). */
  readonly publishers: number;
  readonly batchSize: number;
  readonly intervalMs: number;
  readonly leaseMs: number;
}

// The properties, stated here rather than read from the service, so a change of its defaults is caught.
/** The service's publish deadline (PUBLISH_TIMEOUT_MS, default 5 s) plus slack: no publish may take longer. */
const PUBLISH_BOUND_MS = 6000;
/** Readiness answers within this, hung database or not. */
const READY_BOUND_MS = 2000;
/** After the database answers again: readiness 200 and the first 202 within this. */
const RECOVERY_BOUND_MS = 10_000;
const READY_POLL_MS = 250;
const CLIENT_TIMEOUT_MS = 30_000;
/** A publisher retries a publish (same key, same events) until it is answered 202, for at most this long. */
const RETRY_BUDGET_MS = 60_000;
/** The wait before retrying a call that got no answer (no Retry-After to follow). */
const UNANSWERED_RETRY_MS = 1000;

type Phase = 'before' | 'during' | 'after';

interface PublishCall {
  readonly phase: Phase;
  readonly startedAt: number;
  readonly ms: number;
  /** HTTP status, or 0 when the client gave up or the connection failed. */
  readonly status: number;
  readonly retryAfter?: string;
  readonly seqs: readonly number[];
  /** A retry of an earlier call of the same publish (same Idempotency-Key and events). */
  readonly retry: boolean;
  /** 202 answered from the key: an earlier call of this publish had committed. */
  readonly replayed: boolean;
  /** The event ids of a 202, in the order of `seqs`. */
  readonly eventIds?: readonly string[];
}

interface ReadyCall {
  readonly startedAt: number;
  readonly ms: number;
  readonly status: number;
}

/**
 * The database hangs: MariaDB is reached through a TCP proxy that stops forwarding bytes both ways for
 * `hangMs`, sockets left open (what the service sees when the server process is stopped or packets are
 * dropped), while publishers keep posting. The shared MariaDB server itself is never touched.
 * Demands: no publish takes longer than the bound and none answers 500; those the database cannot
 * commit answer 503 with Retry-After; readiness turns 503 (answering within 2 s) and back to 200;
 * publishes get 202 again after the hang, without a restart; every event answered 202 is delivered.
 *
 * Publishers behave as docs/api.md asks of a producer: each publish carries an `Idempotency-Key` and is retried with the
 * same key and events after every 503 (following Retry-After) and every call left unanswered, until it is answered 202.
 * Demanded: every event delivered under one event id, the one its 202 named (a 503'd call that committed anyway is
 * answered from its key on the retry, not published again).
 */
export async function hungDatabase(server: DatabaseServer, size: HungDatabaseSize) {
  const run = await startFaultRun(server, 'db-hang');
  const target = new URL(run.database.url!);
  const proxy = await PausableTcpProxy.start(target.hostname, Number(target.port || 3306));
  let instance: MainProcess | undefined;
  try {
    const database = { ...run.database.env, DATABASE_URL: proxy.proxiedUrl(run.database.url!) };
    instance = await startMainProcess({ database, caFile: run.caFile, delivery: { leaseMs: size.leaseMs } }, run.logDir, 'instance');
    await run.receiver.call('setSecrets', await enableWebhooks(instance.base, size.users, run.bases));
    const base = instance.base;

    let pausedAt = Number.POSITIVE_INFINITY;
    let resumedAt = Number.POSITIVE_INFINITY;
    const phaseAt = (t: number): Phase => (t < pausedAt ? 'before' : t < resumedAt ? 'during' : 'after');
    let stopping = false;
    let nextSeq = 0;
    const calls: PublishCall[] = [];
    const readiness: ReadyCall[] = [];

    const publisher = async () => {
      while (!stopping) {
        const seqs = Array.from({ length: size.batchSize }, () => nextSeq++);
        const events = seqs.map((seq) => benchEvent(seq, size.users));
        const key = randomUUID();
        const firstStartedAt = wallMs();
        for (let retry = false; ; retry = true) {
          const startedAt = wallMs();
          const answer = await post(base, events, key);
          calls.push({ phase: phaseAt(startedAt), startedAt, ms: wallMs() - startedAt, seqs, retry, ...answer });
          const again = answer.status === 503 || answer.status === 0;
          if (!again || wallMs() - firstStartedAt > RETRY_BUDGET_MS) break;
          await sleep(
            answer.status === 503 && /^\d+$/.test(answer.retryAfter ?? '') ? Number(answer.retryAfter) * 1000 : UNANSWERED_RETRY_MS,
          );
        }
        await sleep(Math.max(0, size.intervalMs - (wallMs() - firstStartedAt)));
      }
    };
    const readinessPoller = async () => {
      while (!stopping) {
        const startedAt = wallMs();
        const status = await get(`${base}/health/ready`);
        readiness.push({ startedAt, ms: wallMs() - startedAt, status });
        await sleep(Math.max(0, READY_POLL_MS - (wallMs() - startedAt)));
      }
    };
    const load = Promise.all([...Array.from({ length: size.publishers }, publisher), readinessPoller()]);

    await sleep(size.beforeMs);
    proxy.pause();
    pausedAt = wallMs();
    run.log(`database paused (${proxy.connections} proxied connection(s) held open) for ${size.hangMs} ms`);
    await sleep(size.hangMs);
    await proxy.resume();
    resumedAt = wallMs();
    run.log('database resumed');
    await sleep(size.afterMs);
    stopping = true;
    await load;

    const acknowledged = new Set(calls.filter((call) => call.status === 202).flatMap((call) => call.seqs));
    run.log(`${calls.length} publish calls, ${acknowledged.size} events acknowledged; waiting for every delivery`);
    const attempts = await waitForAllDelivered(run, acknowledged, size.leaseMs + 150_000);
    const delivered = await checkAllDelivered(run, acknowledged, attempts);

    // Events never acknowledged (every call of their publish answered 503 or nothing) whose write committed anyway: delivered.
    const refusedSeqs = new Set(calls.filter((call) => call.status !== 202).flatMap((call) => call.seqs));
    for (const seq of acknowledged) refusedSeqs.delete(seq);
    const refusedButDelivered = refusedSeqs.size - missingSeqs(refusedSeqs, await receivedAttempts(run.receiver)).length;
    const retries = idempotentRetries(calls, attempts);

    const byPhase = (phase: Phase) => summarize(calls.filter((call) => call.phase === phase));
    const figures = {
      publishes: { before: byPhase('before'), during: byPhase('during'), after: byPhase('after') },
      readiness: readinessFigures(readiness, pausedAt, resumedAt),
      firstAcceptedAfterResumeMs: firstAfter(
        calls.filter((call) => call.status === 202).map((call) => call.startedAt + call.ms),
        resumedAt,
      ),
    };
    const problems = run.problems;
    const overBound = calls.filter((call) => call.ms > PUBLISH_BOUND_MS);
    if (overBound.length > 0)
      problems.push(
        `${overBound.length} publish(es) took longer than ${PUBLISH_BOUND_MS} ms (max ${Math.round(Math.max(...overBound.map((c) => c.ms)))} ms)`,
      );
    const unexpected = calls.filter((call) => call.status !== 202 && call.status !== 503);
    if (unexpected.length > 0)
      problems.push(
        `${unexpected.length} publish(es) answered neither 202 nor 503: ${[...new Set(unexpected.map((c) => c.status))].join(', ')}`,
      );
    const noRetryAfter = calls.filter((call) => call.status === 503 && !/^\d+$/.test(call.retryAfter ?? ''));
    if (noRetryAfter.length > 0) problems.push(`${noRetryAfter.length} 503(s) without a Retry-After in seconds`);
    const acceptedWhileHung = calls.filter(
      (call) => call.status === 202 && call.startedAt >= pausedAt && call.startedAt + call.ms < resumedAt,
    );
    if (acceptedWhileHung.length > 0) problems.push(`${acceptedWhileHung.length} publish(es) answered 202 while the database hung`);
    if (figures.publishes.during.answered[503] === undefined) problems.push('no publish answered 503 during the hang');
    if (figures.publishes.before.answered[202] === undefined) problems.push('no publish was accepted before the hang');
    if (figures.publishes.after.answered[202] === undefined) problems.push('no publish was accepted after the hang');
    else if (figures.firstAcceptedAfterResumeMs === null || figures.firstAcceptedAfterResumeMs > RECOVERY_BOUND_MS) {
      problems.push(
        `the first publish accepted after the hang came ${figures.firstAcceptedAfterResumeMs} ms after it (bound ${RECOVERY_BOUND_MS} ms)`,
      );
    }
    const ready = figures.readiness;
    if (ready.maxMs > READY_BOUND_MS) problems.push(`readiness took up to ${ready.maxMs} ms to answer (bound ${READY_BOUND_MS} ms)`);
    if (ready.firstUnreadyAfterPauseMs === null) problems.push('readiness never answered 503 during the hang');
    if (ready.readyAgainAfterResumeMs === null || ready.readyAgainAfterResumeMs > RECOVERY_BOUND_MS) {
      problems.push(`readiness was not 200 again within ${RECOVERY_BOUND_MS} ms of the hang's end (${ready.readyAgainAfterResumeMs} ms)`);
    }
    // Reported (figures.readiness.unreadyBeforeHang), not failed: under this load on 2 shared cores a 1 s readiness ping can miss
    // once before the hang; the properties under test are how the service answers during the hang and that it recovers.
    if (retries.duplicatesByEventId > 0)
      problems.push(`${retries.duplicatesByEventId} event(s) delivered under more than one event id (published again by a retry)`);
    if (retries.deliveredUnderAnotherId > 0)
      problems.push(`${retries.deliveredUnderAnotherId} event(s) delivered under another event id than their 202 named`);
    if (retries.gaveUp > 0) problems.push(`${retries.gaveUp} publish(es) never answered 202 within ${RETRY_BUDGET_MS} ms of retries`);
    const serviceAlive = instance.child.exitCode === null && instance.child.signalCode === null;
    if (!serviceAlive) problems.push('the service exited');

    return {
      scenario: `MariaDB hangs for ${size.hangMs / 1000} s (a proxy stops forwarding, sockets open) under continuous publishing`,
      bounds: { publishMs: PUBLISH_BOUND_MS, readyMs: READY_BOUND_MS, recoveryMs: RECOVERY_BOUND_MS },
      ...figures,
      acknowledged: acknowledged.size,
      deliveryRows: delivered.deliveryRows,
      lost: delivered.lost,
      notDelivered: delivered.notDelivered,
      notAcknowledged: refusedSeqs.size,
      notAcknowledgedButDelivered: refusedButDelivered,
      idempotentRetries: retries,
      duplicates: duplicatesOf(attempts),
      badSignatures: delivered.badSignatures,
      serviceAlive,
      problems,
    };
  } finally {
    await instance?.stop();
    await proxy.close();
    await run.close();
  }
}

async function post(
  base: string,
  events: unknown[],
  idempotencyKey: string,
): Promise<{ status: number; retryAfter?: string; replayed: boolean; eventIds?: string[] }> {
  try {
    const response = await request(`${base}/api/v1/internal/notifications/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ events }),
      headersTimeout: CLIENT_TIMEOUT_MS,
      bodyTimeout: CLIENT_TIMEOUT_MS,
    });
    const retryAfter = response.headers['retry-after'];
    const answer = { status: response.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
    if (response.statusCode !== 202) {
      await response.body.dump();
      return { ...answer, replayed: false };
    }
    const body = (await response.body.json()) as { eventIds: string[]; replayed?: boolean };
    return { ...answer, replayed: body.replayed === true, eventIds: body.eventIds };
  } catch {
    return { status: 0, replayed: false };
  }
}

/**
 * What the idempotency keys did: of the publishes whose call answered 503 (or nothing), how many had committed anyway
 * (their retry was answered from the key) and how many had not (the retry published them); and whether any event
 * reached the receiver under two event ids, or under another id than its 202 named.
 */
function idempotentRetries(calls: readonly PublishCall[], attempts: AttemptsByEvent) {
  const publishes = new Map<number, PublishCall[]>(); // by the first seq of the publish
  for (const call of calls) publishes.set(call.seqs[0], [...(publishes.get(call.seqs[0]) ?? []), call]);
  const retried = [...publishes.values()].filter((list) => list.some((call) => call.status !== 202));
  const accepted = (list: readonly PublishCall[]) => list.find((call) => call.status === 202);
  const idsBySeq = new Map<number, Set<string>>();
  for (const [eventId, list] of attempts)
    for (const attempt of list) if (attempt.seq !== null) idsBySeq.set(attempt.seq, (idsBySeq.get(attempt.seq) ?? new Set()).add(eventId));
  const acknowledgedId = new Map<number, string>();
  for (const call of calls) if (call.eventIds) call.seqs.forEach((seq, index) => acknowledgedId.set(seq, call.eventIds![index]));
  return {
    publishes: publishes.size,
    retriedPublishes: retried.length,
    retries: calls.filter((call) => call.retry).length,
    /** Publishes answered 503 (or not answered) that had in fact committed: a retry was answered from the key. */
    committedDespite503: retried.filter((list) => accepted(list)?.replayed === true).length,
    /** Publishes answered 503 that had not committed: the retry published them. */
    notCommittedUntilRetry: retried.filter((list) => accepted(list)?.replayed === false).length,
    retriesAnsweredFromKey: calls.filter((call) => call.retry && call.replayed).length,
    gaveUp: retried.filter((list) => accepted(list) === undefined).length,
    duplicatesByEventId: [...idsBySeq.values()].filter((ids) => ids.size > 1).length,
    deliveredUnderAnotherId: [...idsBySeq].filter(([seq, ids]) => acknowledgedId.has(seq) && !ids.has(acknowledgedId.get(seq)!)).length,
  };
}

async function get(url: string): Promise<number> {
  try {
    const response = await request(url, { headersTimeout: CLIENT_TIMEOUT_MS, bodyTimeout: CLIENT_TIMEOUT_MS });
    await response.body.dump();
    return response.statusCode;
  } catch {
    return 0;
  }
}

function summarize(calls: readonly PublishCall[]) {
  const sorted = calls.map((call) => call.ms).sort((a, b) => a - b);
  const at = (q: number) => (sorted.length === 0 ? 0 : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]));
  const answered: Record<number, number> = {};
  for (const call of calls) answered[call.status] = (answered[call.status] ?? 0) + 1;
  return { calls: calls.length, answered, ms: { p50: at(0.5), p99: at(0.99), max: Math.round(sorted.at(-1) ?? 0) } };
}

function readinessFigures(calls: readonly ReadyCall[], pausedAt: number, resumedAt: number) {
  const during = calls.filter((call) => call.startedAt >= pausedAt && call.startedAt < resumedAt);
  const firstUnready = during.find((call) => call.status !== 200);
  const readyAgain = calls.find((call) => call.startedAt >= resumedAt && call.status === 200);
  return {
    probes: calls.length,
    maxMs: Math.round(Math.max(0, ...calls.map((call) => call.ms))),
    duringHang: {
      probes: during.length,
      unready: during.filter((call) => call.status === 503).length,
      maxMs: Math.round(Math.max(0, ...during.map((call) => call.ms))),
    },
    unreadyBeforeHang: calls.filter((call) => call.startedAt < pausedAt && call.status !== 200).length,
    firstUnreadyAfterPauseMs: firstUnready ? Math.round(firstUnready.startedAt + firstUnready.ms - pausedAt) : null,
    readyAgainAfterResumeMs: readyAgain ? Math.round(readyAgain.startedAt + readyAgain.ms - resumedAt) : null,
  };
}

function firstAfter(times: readonly number[], from: number): number | null {
  const after = times.filter((t) => t >= from);
  return after.length === 0 ? null : Math.round(Math.min(...after) - from);
}
