import { request } from 'undici';
import { TestDnsServer } from '../../test/support/test-dns-server';
import { sleep, wallMs } from '../lib/clock';
import { type BenchContext, round } from '../lib/context';
import type { Arrival } from '../lib/receiver-types';
import type { Target } from '../lib/report';
import { type MainProcess, startMainProcess, userAuthorization } from '../lib/services';
import { benchEvent, postBatch, typeOfUser } from '../lib/workload';
import { percentiles, type Percentiles } from './latency';

/** The zone the bench's DNS server never answers (the review's attack), and the one it answers. */
export const BLACK_HOLED_ZONE = 'slow.test';
export const ANSWERED_ZONE = 'ok.test';
/** The service's save-time lookup deadline (`hostResolution.saveTimeoutMs`, its default). */
const SAVE_DEADLINE_MS = 2000;
/** What a loaded 2-core machine may add to the deadline before the 400 is read (the HTTP round trip, the event loop). */
const SAVE_SLACK_MS = 1000;
/** Target: each victim's p99 during the flood at most this many times its p99 without it. */
const MAX_P99_RATIO = 2;
/** Samples per second of each victim measure. */
const VICTIM_RATE = 4;
/** A victim's event not at the receiver this long after its publish counts as undelivered. */
const ARRIVAL_WAIT_MS = 15_000;
/** Victims' host names carry this TTL, so that every connection asks the DNS (none is served from the cache). */
const VICTIM_TTL_SECONDS = 0;
/** The ordinary names the savers save: each is new, so each save asks the DNS once. */
const SAVED_TTL_SECONDS = 60;

const ATTACKER = 900_001;
/** The reconnect-after-idle user of each kind of window (its endpoint keeps one host name all along). */
const IDLE_USER = { baseline: 900_010, flood: 900_011 } as const;
/** Users saving ordinary URLs, two per kind of window, in turn: their saves stay within the settings limit. */
const SAVERS = { baseline: [900_020, 900_021], flood: [900_022, 900_023] } as const;
/** Fresh-endpoint users from here: each gets one new webhook (a host name never connected to) and one event. */
const FRESH_USER_BASE = 910_000;
const EVENT_SEQ_BASE = 5_000_000;

type Phase = 'baseline' | 'flood';

export interface DnsFloodSize {
  /** Length of each window; a round is a window without the flood, then one with it. */
  readonly seconds: number;
  /** Rounds: windows alternate, so that the machine's drift (other processes, other sessions) weighs on both alike. */
  readonly rounds: number;
  /** The attacker's saves per second during the flood windows (at a 429 it waits for the window's end). */
  readonly attackerRate: number;
}

interface Latencies extends Percentiles {
  readonly count: number;
}

export interface VictimMeasures {
  /** Publish to arrival of an event to a webhook whose host name was never connected to (a lookup, TCP and TLS). */
  readonly freshEndpointMs: Latencies | null;
  /** Publish to arrival after the receiver closed every idle connection (a reconnect: a lookup, TCP and TLS). */
  readonly reconnectAfterIdleMs: Latencies | null;
  /** `PUT /settings/notifications` of a new ordinary host name (a lookup that is answered). */
  readonly saveMs: Latencies | null;
  readonly published: number;
  readonly undelivered: number;
  readonly saveFailures: number;
  readonly publishFailures: number;
}

export interface AttackerResult {
  /** Saves sent; of them answered 429 by the rate limit (not a lookup). */
  readonly saves: number;
  readonly rateLimited: number;
  readonly byStatus: Record<string, number>;
  /** 400s naming `webhookUrl`: no DNS answer within the deadline, or the user's lookups in flight already at their cap. */
  readonly noAnswerInTime: number;
  readonly tooManyInFlight: number;
  readonly otherAnswers: string[];
  /** Of the saves past the rate limit. */
  readonly latencyMs: Latencies | null;
  readonly deadlineMs: number;
  /** DNS questions (retransmissions counted once) for the black-holed names, A and AAAA. */
  readonly dnsQuestions: number;
}

export interface DnsFloodResult {
  readonly settings: {
    readonly windowSeconds: number;
    readonly rounds: number;
    readonly attackerRate: number;
    readonly victimRatePerMeasure: number;
    readonly saveDeadlineMs: number;
    readonly victimNamesTtlSeconds: number;
  };
  readonly baseline: VictimMeasures;
  readonly flood: VictimMeasures & { readonly attacker: AttackerResult };
  /** Questions for each fresh endpoint's name (A, retransmissions once) the DNS server saw: its save's and its connection's. */
  readonly dnsQuestionsPerFreshEndpoint: number;
  readonly ratios: Record<'freshEndpoint' | 'reconnectAfterIdle' | 'save', { p50: number; p99: number } | null>;
  readonly targets: Record<string, Target>;
}

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] dns-flood: ${message}\n`);

/**
 * Issue 36 §1: a DNS server in the bench (UDP, loopback) answers `*.ok.test` and never answers `*.slow.test`; one
 * `node dist/service/main.js` resolves webhook host names through it (`WEBHOOK_DNS_SERVERS`). Windows without and with the flood
 * alternate; in each, three victims are measured at 4 samples a second: events to fresh endpoints (a new host name each:
 * a lookup and a new connection), events to one endpoint after the receiver closed its idle connections (a lookup and a
 * reconnect), and saves of new ordinary host names (a lookup that is answered). In the flood windows one user saves
 * `https://r<i>.slow.test/hook` as fast as the settings limit allows. Asserted (the run fails otherwise): every
 * attacker save past the rate limit is answered 400 naming `webhookUrl` within the deadline + 1 s; the victims' p99
 * during the flood is at most 2 × their p99 without it; every victim save and event is served.
 */
export async function dnsFlood(context: BenchContext, size: DnsFloodSize): Promise<DnsFloodResult> {
  const dns = await TestDnsServer.start({ blackHoledZones: [BLACK_HOLED_ZONE] });
  const database = await context.server.create('dns_flood');
  let service: MainProcess | undefined;
  try {
    const origins = context.bases.map((base) => new URL(base));
    const hostFor = (label: string, index: number, ttlSeconds: number) => {
      const origin = origins[index % origins.length];
      dns.set(`${label}.${ANSWERED_ZONE}`, { a: [origin.hostname], ttlSeconds });
      return `${label}.${ANSWERED_ZONE}:${origin.port}`;
    };
    service = await startMainProcess(
      { database: database.env, caFile: context.caFile, dnsServers: [dns.address] },
      context.logDir,
      'dns-flood',
    );
    const run: Run = { context, base: service.base, hostFor, attackerNames: 0, freshUsers: 0 };
    for (const phase of ['baseline', 'flood'] as const) {
      const userId = IDLE_USER[phase];
      const host = hostFor(`idle-${phase}`, userId, VICTIM_TTL_SECONDS);
      await context.receiver.call('addSecrets', [await save(run, userId, webhookUrlOf(host, userId))]);
      await publishOne(run, userId, EVENT_SEQ_BASE + (phase === 'flood' ? 1 : 0)); // the measured events reconnect
    }
    await sleep(1000);

    const windows: Record<Phase, WindowResult[]> = { baseline: [], flood: [] };
    for (let i = 0; i < size.rounds; i++) {
      for (const phase of ['baseline', 'flood'] as const) {
        const result = await measureWindow(run, phase, windows.baseline.length + windows.flood.length, size);
        windows[phase].push(result);
      }
    }
    const baseline = measuresOf(windows.baseline);
    const flood = measuresOf(windows.flood);
    const freshNames = [...windows.baseline, ...windows.flood].flatMap((window) => window.freshNames);
    const answers = windows.flood.flatMap((window) => window.attack ?? []);
    const attacker = attackerResult(
      answers,
      answers.reduce((sum, { name }) => sum + dns.questionsFor(name, 'A') + dns.questionsFor(name, 'AAAA'), 0),
    );
    const ratio = (key: 'freshEndpointMs' | 'reconnectAfterIdleMs' | 'saveMs') => {
      const [before, during] = [baseline[key], flood[key]];
      return before && during ? { p50: round(during.p50 / before.p50, 2), p99: round(during.p99 / before.p99, 2) } : null;
    };
    const ratios = { freshEndpoint: ratio('freshEndpointMs'), reconnectAfterIdle: ratio('reconnectAfterIdleMs'), save: ratio('saveMs') };
    const result: DnsFloodResult = {
      settings: {
        windowSeconds: size.seconds,
        rounds: size.rounds,
        attackerRate: size.attackerRate,
        victimRatePerMeasure: VICTIM_RATE,
        saveDeadlineMs: SAVE_DEADLINE_MS,
        victimNamesTtlSeconds: VICTIM_TTL_SECONDS,
      },
      baseline,
      flood: { ...flood, attacker },
      dnsQuestionsPerFreshEndpoint: round(freshNames.reduce((sum, name) => sum + dns.questionsFor(name, 'A'), 0) / freshNames.length, 2),
      ratios,
      targets: targetsOf(baseline, flood, attacker, ratios),
    };
    for (const [name, target] of Object.entries(result.targets)) {
      if (!target.met) context.failures.push(`dns-flood: ${name} not met: ${JSON.stringify(target)}`);
    }
    return result;
  } finally {
    await service?.stop();
    await database.drop();
    await dns.close();
  }
}

interface Run {
  readonly context: BenchContext;
  readonly base: string;
  /** Registers `<label>.ok.test` with the DNS (one of the receiver's origins) and answers `host:port` for a URL. */
  readonly hostFor: (label: string, index: number, ttlSeconds: number) => string;
  /** Counters across windows: black-holed names used, fresh-endpoint users used. */
  attackerNames: number;
  freshUsers: number;
}

interface SaveAnswer {
  readonly name: string;
  readonly status: number;
  readonly message: string;
  readonly field?: string;
  readonly ms: number;
}

interface WindowResult {
  readonly fresh: number[];
  readonly reconnect: number[];
  readonly saves: number[];
  readonly published: number;
  readonly saveFailures: number;
  readonly publishFailures: number;
  readonly freshNames: string[];
  readonly attack?: SaveAnswer[];
}

const webhookUrlOf = (host: string, userId: number) => `https://${host}/hook/${userId}/${typeOfUser(userId)}`;

/** One window of `size.seconds`: the three victims, and the attacker when it is a flood window. */
async function measureWindow(run: Run, phase: Phase, window: number, size: DnsFloodSize): Promise<WindowResult> {
  const endAt = wallMs() + size.seconds * 1000;
  const seqBase = EVENT_SEQ_BASE + (window + 1) * 100_000;
  const [fresh, reconnect, saves, attack] = await Promise.all([
    freshEndpoints(run, window, seqBase, endAt),
    reconnects(run, IDLE_USER[phase], seqBase + 50_000, endAt),
    ordinarySaves(run, SAVERS[phase], window, endAt),
    phase === 'flood' ? flood(run, size.attackerRate, endAt) : undefined,
  ]);
  const published = fresh.published.size + reconnect.published.size;
  const deadline = wallMs() + ARRIVAL_WAIT_MS;
  let arrivals: Arrival[];
  for (;;) {
    arrivals = await run.context.receiver.call<Arrival[]>('arrivals');
    const arrived = arrivals.filter(([, , , seq]) => fresh.published.has(seq) || reconnect.published.has(seq)).length;
    if (arrived >= published || wallMs() > deadline) break;
    await sleep(200);
  }
  const latencies = (published: Set<number>) => arrivals.filter(([, , , seq]) => published.has(seq)).map(([latency]) => latency);
  const result: WindowResult = {
    fresh: latencies(fresh.published),
    reconnect: latencies(reconnect.published),
    saves: saves.latencies,
    published,
    saveFailures: fresh.saveFailures + saves.failures,
    publishFailures: fresh.publishFailures + reconnect.publishFailures,
    freshNames: fresh.names,
    ...(attack ? { attack } : {}),
  };
  const p99 = (values: number[]) => (values.length > 0 ? percentiles(values).p99 : null);
  log(
    `window ${window + 1} (${phase}): p99 fresh endpoint ${p99(result.fresh)} ms, reconnect ${p99(result.reconnect)} ms, ` +
      `save ${p99(result.saves)} ms; ${published - result.fresh.length - result.reconnect.length} of ${published} undelivered` +
      (attack ? `; attacker: ${attack.length} saves, max ${Math.round(Math.max(...attack.map((answer) => answer.ms)))} ms` : ''),
  );
  return result;
}

/** The attacker: a save of a new black-holed name every 1/`rate` s (not waiting for answers) until `endAt` or a 429. */
async function flood(run: Run, rate: number, endAt: number): Promise<SaveAnswer[]> {
  const startedAt = wallMs();
  const calls: Promise<SaveAnswer>[] = [];
  let limited = false;
  for (let i = 0; !limited; i++) {
    const wait = startedAt + (i * 1000) / rate - wallMs();
    if (wait > 1) await sleep(wait);
    if (wallMs() >= endAt) break;
    const name = `r${run.attackerNames++}.${BLACK_HOLED_ZONE}`;
    calls.push(
      timedSave(run, ATTACKER, `https://${name}/hook`).then((answer) => {
        if (answer.status === 429) limited = true;
        return { ...answer, name };
      }),
    );
  }
  return Promise.all(calls);
}

/** Every 1/{@link VICTIM_RATE} s a new user saves a webhook on a host name never used before, then gets one event. */
async function freshEndpoints(run: Run, window: number, seqBase: number, endAt: number) {
  const published = new Set<number>();
  const names: string[] = [];
  let saveFailures = 0;
  let publishFailures = 0;
  const tasks: Promise<void>[] = [];
  await paced(endAt, (i) => {
    const userId = FRESH_USER_BASE + run.freshUsers++;
    const label = `f${window}-${i}`;
    const host = run.hostFor(label, i, VICTIM_TTL_SECONDS);
    names.push(`${label}.${ANSWERED_ZONE}`);
    tasks.push(
      (async () => {
        let secret: [string, string];
        try {
          secret = await save(run, userId, webhookUrlOf(host, userId));
        } catch {
          saveFailures++;
          return;
        }
        await run.context.receiver.call('addSecrets', [secret]);
        if (await publishOne(run, userId, seqBase + i)) published.add(seqBase + i);
        else publishFailures++;
      })(),
    );
  });
  await Promise.all(tasks);
  return { published, names, saveFailures, publishFailures };
}

/** Every 1/{@link VICTIM_RATE} s the receiver drops its idle connections, and one event goes to the same endpoint. */
async function reconnects(run: Run, userId: number, seqBase: number, endAt: number) {
  const published = new Set<number>();
  let publishFailures = 0;
  await paced(endAt, async (i) => {
    await run.context.receiver.call('closeIdleConnections');
    await sleep(20); // the service's socket sees the close before the next event
    if (await publishOne(run, userId, seqBase + i)) published.add(seqBase + i);
    else publishFailures++;
  });
  return { published, publishFailures };
}

/** Every 1/{@link VICTIM_RATE} s one of two users saves a webhook on a new ordinary host name. */
async function ordinarySaves(run: Run, users: readonly number[], window: number, endAt: number) {
  const latencies: number[] = [];
  let failures = 0;
  const tasks: Promise<void>[] = [];
  await paced(endAt, (i) => {
    const userId = users[i % users.length];
    const host = run.hostFor(`s${window}-${i}`, i, SAVED_TTL_SECONDS);
    tasks.push(
      timedSave(run, userId, webhookUrlOf(host, userId)).then((answer) => {
        if (answer.status === 200) latencies.push(answer.ms);
        else failures++;
      }),
    );
  });
  await Promise.all(tasks);
  return { latencies, failures };
}

/** Calls `step(i)` every 1/{@link VICTIM_RATE} s on a fixed schedule until `endAt`; awaits a step only if it returns a promise. */
async function paced(endAt: number, step: (i: number) => void | Promise<void>): Promise<void> {
  const startedAt = wallMs();
  for (let i = 0; ; i++) {
    const wait = startedAt + (i * 1000) / VICTIM_RATE - wallMs();
    if (wait > 1) await sleep(wait);
    if (wallMs() >= endAt) return;
    await step(i);
  }
}

async function timedSave(run: Run, userId: number, webhookUrl: string) {
  const startedAt = performance.now();
  const response = await request(`${run.base}/api/v1/settings/notifications`, {
    method: 'PUT',
    headers: { authorization: userAuthorization(userId), 'content-type': 'application/json' },
    body: JSON.stringify({ type: typeOfUser(userId), channel: 'WEBHOOK', enabled: true, webhookUrl }),
  });
  const body = (await response.body.json()) as { message?: string; errors?: { field: string }[]; webhookSecret?: string };
  return {
    status: response.statusCode,
    message: String(body.message ?? ''),
    field: body.errors?.[0]?.field,
    secret: body.webhookSecret,
    ms: performance.now() - startedAt,
  };
}

/** Enables the user's webhook at `webhookUrl`; answers the receiver's secret entry. */
async function save(run: Run, userId: number, webhookUrl: string): Promise<[string, string]> {
  const answer = await timedSave(run, userId, webhookUrl);
  if (answer.status !== 200 || !answer.secret) throw new Error(`saving a webhook of user ${userId}: ${answer.status} ${answer.message}`);
  return [`${userId}/${typeOfUser(userId)}`, answer.secret];
}

/** One event through the internal endpoint (`payload.t` stamped before the call); false when it was not acknowledged. */
async function publishOne(run: Run, userId: number, seq: number): Promise<boolean> {
  try {
    const { queuedDeliveries } = await postBatch(run.base, [{ ...benchEvent(seq, 1), userId, type: typeOfUser(userId) }]);
    return queuedDeliveries === 1;
  } catch {
    return false;
  }
}

function summary(values: readonly number[]): Latencies | null {
  return values.length === 0 ? null : { count: values.length, ...percentiles(values) };
}

function measuresOf(windows: readonly WindowResult[]): VictimMeasures {
  const fresh = windows.flatMap((window) => window.fresh);
  const reconnect = windows.flatMap((window) => window.reconnect);
  const published = windows.reduce((sum, window) => sum + window.published, 0);
  return {
    freshEndpointMs: summary(fresh),
    reconnectAfterIdleMs: summary(reconnect),
    saveMs: summary(windows.flatMap((window) => window.saves)),
    published,
    undelivered: published - fresh.length - reconnect.length,
    saveFailures: windows.reduce((sum, window) => sum + window.saveFailures, 0),
    publishFailures: windows.reduce((sum, window) => sum + window.publishFailures, 0),
  };
}

function attackerResult(answers: readonly SaveAnswer[], dnsQuestions: number): AttackerResult {
  const byStatus: Record<string, number> = {};
  for (const { status } of answers) byStatus[status] = (byStatus[status] ?? 0) + 1;
  const past = answers.filter((answer) => answer.status !== 429);
  const onField = past.filter((answer) => answer.status === 400 && answer.field === 'webhookUrl');
  const other = past.filter((answer) => !onField.includes(answer));
  return {
    saves: answers.length,
    rateLimited: answers.length - past.length,
    byStatus,
    noAnswerInTime: onField.filter((answer) => /no DNS answer in time/.test(answer.message)).length,
    tooManyInFlight: onField.filter((answer) => /too many of your host name lookups/.test(answer.message)).length,
    otherAnswers: [...new Set(other.map((answer) => `${answer.status} ${answer.message}`))].slice(0, 5),
    latencyMs: summary(past.map((answer) => answer.ms)),
    deadlineMs: SAVE_DEADLINE_MS,
    dnsQuestions,
  };
}

function targetsOf(
  baseline: VictimMeasures,
  flood: VictimMeasures,
  attacker: AttackerResult,
  ratios: DnsFloodResult['ratios'],
): Record<string, Target> {
  const pastLimit = attacker.saves - attacker.rateLimited;
  const answered400 = attacker.noAnswerInTime + attacker.tooManyInFlight;
  const maxMs = attacker.latencyMs?.max ?? null;
  const boundMs = SAVE_DEADLINE_MS + SAVE_SLACK_MS;
  const p99Ratios = {
    freshEndpoint: ratios.freshEndpoint?.p99,
    reconnectAfterIdle: ratios.reconnectAfterIdle?.p99,
    save: ratios.save?.p99,
  };
  const unserved = baseline.undelivered + flood.undelivered + baseline.saveFailures + flood.saveFailures;
  const unacknowledged = baseline.publishFailures + flood.publishFailures;
  return {
    dnsFloodAttackerSavesAll400WithinDeadline: {
      savesPastRateLimit: pastLimit,
      answered400,
      maxMs,
      boundMs,
      boundIs: 'the save deadline (2 s) + 1 s for the machine',
      met: pastLimit > 0 && answered400 === pastLimit && maxMs !== null && maxMs <= boundMs,
    },
    dnsFloodVictimsP99Within2xBaseline: {
      p99Ratios,
      bound: MAX_P99_RATIO,
      met: Object.values(p99Ratios).every((ratio) => ratio !== undefined && ratio <= MAX_P99_RATIO),
    },
    dnsFloodVictimsAllServed: {
      undelivered: baseline.undelivered + flood.undelivered,
      saveFailures: baseline.saveFailures + flood.saveFailures,
      publishFailures: unacknowledged,
      met: unserved + unacknowledged === 0,
    },
  };
}
