import type { AttemptResult } from '../../src/notifications/delivery/http/attempt-result';
import type { Prng } from './prng';
import { type Instance, type Mode, TIMEOUT_MS } from './world-model';

/** What a request of an instance whose own network is down gets: no route, whatever the receiver. */
export function networkUnreachable(durationMs: number): AttemptResult {
  return { outcome: 'connect_error', statusCode: null, durationMs, error: 'ENETUNREACH', responseExcerpt: null };
}

/** What a request to an endpoint got, when it left and when it was answered (global times), and when its sender saw it. */
export interface Answer {
  readonly sentAt: number;
  readonly at: number;
  seenAt: number;
  readonly unreachable: boolean;
  /** The instance that sent the request. */
  readonly sender: Instance;
  /**
   * Whether its sender still held the user's partition as it saw the answer; one that no longer did (a pause took its
   * lease meanwhile) writes nothing for the owner, so only it knows of that answer.
   */
  owned: boolean;
  /**
   * A failure its sender saw after its last answer from any receiver, on an endpoint it then handed over standing down
   * (its own network may be what failed): it says nothing of the endpoint to any other instance.
   */
  alone?: true;
}

/**
 * The webhooks' receivers: how each host behaves now (up, slow, flaky, 5xx, timeout, hang after the status line,
 * connection refused), what a request to it gets, and what each endpoint answered, all instances together.
 */
export class Receivers {
  /** Per host (`u1-a.example`): how it answers now. */
  readonly modes = new Map<string, Mode>();
  /**
   * Per endpoint key: the answers of the requests to it, all instances together, in order (global time), and when the
   * sending process saw each (later when it was paused then: its timeout fired, or it read the answer, as it woke).
   */
  readonly answers = new Map<string, Answer[]>();

  constructor(private readonly random: Prng) {}

  randomMode(): Mode {
    return this.random.weighted({ up: 30, slow: 10, flaky: 15, error: 10, timeout: 10, hang: 5, refused: 15 });
  }

  /** What a request to a host in `mode` gets, and after how long. */
  answer(mode: Mode): AttemptResult {
    const r = this.random;
    const ok = (durationMs: number): AttemptResult => ({
      outcome: 'success',
      statusCode: 200,
      durationMs,
      error: null,
      responseExcerpt: 'ok',
    });
    const status = (code: number): AttemptResult => ({
      outcome: 'http_error',
      statusCode: code,
      durationMs: r.int(5, 800),
      error: `HTTP ${code}`,
      responseExcerpt: null,
    });
    switch (mode) {
      case 'up':
        return ok(r.int(5, 1_500));
      case 'slow':
        return ok(r.int(2_000, TIMEOUT_MS - 1));
      case 'flaky':
        return r.chance(0.5) ? status(503) : ok(r.int(5, 1_500));
      case 'error':
        return status(r.pick([500, 502, 503]));
      case 'timeout':
        return {
          outcome: 'timeout',
          statusCode: null,
          durationMs: TIMEOUT_MS,
          error: 'no answer within the deadline',
          responseExcerpt: null,
        };
      case 'hang':
        return {
          outcome: 'timeout',
          statusCode: 200,
          durationMs: TIMEOUT_MS,
          error: 'body stalled after the status line',
          responseExcerpt: null,
        };
      case 'refused':
        return { outcome: 'connect_error', statusCode: null, durationMs: r.int(1, 30), error: 'ECONNREFUSED', responseExcerpt: null };
    }
  }

  /**
   * A request of `sender` to `endpoint`, sent at `sentAt`, ended at `at`: answered (any HTTP status), or unreachable (a
   * timeout, a refused connection). Its sender sees it then, or as it wakes (`seenAt` and `owned`, set by the sender).
   */
  noteAnswer(endpoint: string, sender: Instance, sentAt: number, at: number, unreachable: boolean): Answer {
    const answers = this.answers.get(endpoint) ?? [];
    const answer = { sentAt, at, seenAt: at, unreachable, sender, owned: true };
    answers.push(answer);
    this.answers.set(endpoint, answers);
    return answer;
  }

  /** When `sender` last saw an answer (any HTTP status) from any receiver (global time). */
  lastAnsweredAt(sender: Instance): number {
    let at = Number.NEGATIVE_INFINITY;
    for (const answers of this.answers.values())
      for (const answer of answers) if (answer.sender === sender && !answer.unreachable) at = Math.max(at, answer.seenAt);
    return at;
  }

  /** The failures `sender` saw on `endpoint` after `after` (global time) are its own ({@link Answer.alone}). */
  failedAlone(sender: Instance, endpoint: string, after: number): void {
    for (const answer of this.answers.get(endpoint) ?? [])
      if (answer.sender === sender && answer.unreachable && answer.seenAt > after) answer.alone = true;
  }
}
