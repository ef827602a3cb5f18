import { DeadlineExceededError, type LateOutcome, withDeadline } from './deadline';

describe('withDeadline', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('answers as the work does when it settles in time', async () => {
    const onLate = vi.fn();
    await expect(withDeadline(Promise.resolve(42), 1000, onLate)).resolves.toBe(42);
    await expect(withDeadline(Promise.reject(new Error('bad input')), 1000, onLate)).rejects.toThrow('bad input');
    expect(onLate).not.toHaveBeenCalled();
  });

  it('rejects at the deadline when the work never answers', async () => {
    const never = new Promise<number>(() => undefined);
    const answer = withDeadline(never, 5000, () => undefined);
    const rejected = expect(answer).rejects.toBeInstanceOf(DeadlineExceededError);
    await vi.advanceTimersByTimeAsync(4999);
    let settled = false;
    void answer.catch(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await rejected;
  });

  it('reports how late work ended: committed after the deadline, or failed', async () => {
    let commit!: (value: string) => void;
    let fail!: (error: Error) => void;
    const outcomes: LateOutcome<string>[] = [];
    const committed = withDeadline(new Promise<string>((resolve) => (commit = resolve)), 100, (outcome) => outcomes.push(outcome));
    const failed = withDeadline(new Promise<string>((_, reject) => (fail = reject)), 100, (outcome) => outcomes.push(outcome));
    const bothRejected = Promise.all([
      expect(committed).rejects.toBeInstanceOf(DeadlineExceededError),
      expect(failed).rejects.toBeInstanceOf(DeadlineExceededError),
    ]);
    await vi.advanceTimersByTimeAsync(100);
    await bothRejected;
    commit('queued');
    fail(new Error('connection lost'));
    await vi.waitFor(() => expect(outcomes).toHaveLength(2));
    expect(outcomes).toEqual([
      { ok: true, value: 'queued' },
      { ok: false, error: new Error('connection lost') },
    ]);
  });
});
