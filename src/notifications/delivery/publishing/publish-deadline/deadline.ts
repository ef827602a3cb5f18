/** Why {@link withDeadline} gave up waiting. */
export class DeadlineExceededError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`did not complete within ${timeoutMs} ms`);
    this.name = 'DeadlineExceededError';
  }
}

/** How work that outlived its deadline ended after all. */
export type LateOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

/**
 * Resolves or rejects as `work` does, or rejects with {@link DeadlineExceededError} once `timeoutMs`
 * passes first. The work is not cancelled (a database write cannot be taken back from outside): when it
 * settles after the deadline, `onLate` is told how it ended.
 */
export function withDeadline<T>(work: Promise<T>, timeoutMs: number, onLate: (outcome: LateOutcome<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(new DeadlineExceededError(timeoutMs));
    }, timeoutMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        if (late) onLate({ ok: true, value });
        else resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (late) onLate({ ok: false, error });
        else reject(error);
      },
    );
  });
}
