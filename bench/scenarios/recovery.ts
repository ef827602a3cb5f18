import { request } from 'undici';
import { wallMs } from '../lib/clock';
import { type BenchContext, round } from '../lib/context';
import { seedFailed } from '../lib/seed-backlog';
import { userAuthorization } from '../lib/services';
import { typeOfUser } from '../lib/workload';
import { type LatencyResult, latency } from './latency';

/** FAILED deliveries recovered during the measured window, and over how many users (each calls recover once). */
const RECOVERED = 10_000;
const RECOVERING_USERS = 10;

export interface RecoveryResult {
  readonly recovered: number;
  readonly recoveringUsers: number;
  /** Sum of the recover calls' answers (`queued`): must equal `recovered`. */
  readonly queued: number;
  readonly recoverCallsMs: number;
  readonly baselineP99Ms: number;
  readonly withRecoveryP99Ms: number;
  readonly p99Ratio: number;
  /** Issue 14: live p99 within 2 × its value without the recovery. */
  readonly met: boolean;
  readonly baseline: LatencyResult;
  readonly withRecovery: LatencyResult;
}

/**
 * Issue 14: the latency scenario twice, on fresh databases: alone, then while {@link RECOVERED} FAILED deliveries of
 * {@link RECOVERING_USERS} users are recovered (`POST …/webhook-deliveries/recover` at the start of the window).
 */
export async function recovery(context: BenchContext): Promise<RecoveryResult> {
  const baseline = await latency(context);
  const users = Array.from({ length: RECOVERING_USERS }, (_, i) => i + 1);
  let queued = 0;
  let recoverCallsMs = 0;
  const withRecovery = await latency(context, {
    name: 'recovery',
    async prepare(database) {
      await seedFailed(database, RECOVERED, users, typeOfUser);
      return RECOVERED;
    },
    async start(base) {
      const startedAt = wallMs();
      const since = new Date(Date.now() - 3_600_000).toISOString();
      const answers = await Promise.all(
        users.map(async (userId) => {
          const response = await request(`${base}/api/v1/settings/notifications/webhook-deliveries/recover`, {
            method: 'POST',
            headers: { authorization: userAuthorization(userId), 'content-type': 'application/json' },
            body: JSON.stringify({ since }),
          });
          const body = (await response.body.json()) as { queued?: number };
          if (response.statusCode !== 202) throw new Error(`recover for user ${userId}: ${response.statusCode} ${JSON.stringify(body)}`);
          return body.queued ?? 0;
        }),
      );
      recoverCallsMs = wallMs() - startedAt;
      queued = answers.reduce((sum, n) => sum + n, 0);
    },
  });
  if (queued !== RECOVERED) context.failures.push(`recovery: ${queued} of ${RECOVERED} failed deliveries queued`);
  const baselineP99Ms = baseline.publishToReceiverMs.p99;
  const withRecoveryP99Ms = withRecovery.publishToReceiverMs.p99;
  const p99Ratio = round(withRecoveryP99Ms / baselineP99Ms);
  return {
    recovered: RECOVERED,
    recoveringUsers: RECOVERING_USERS,
    queued,
    recoverCallsMs: round(recoverCallsMs),
    baselineP99Ms,
    withRecoveryP99Ms,
    p99Ratio,
    met: p99Ratio <= 2,
    baseline,
    withRecovery,
  };
}
