interface Pending<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

export interface GroupCommitOptions<T> {
  /** The most a group holds, counted by `sizeOf`; a group always takes at least one item. */
  readonly maxGroupSize: number;
  /** An item's share of `maxGroupSize`; 1 unless told. */
  readonly sizeOf?: (item: T) => number;
  /** How many groups may commit at once; 1 unless told. */
  readonly concurrency?: number;
  /**
   * How long a group waits for company: a drain that starts (a commit slot was free) waits this long before taking its
   * first group, and items submitted meanwhile join it instead of starting another drain. Off unless told. The groups a
   * running drain takes after its first do not wait: they formed while the one before committed.
   */
  readonly linger?: { readonly ms: number; readonly wait: (ms: number) => Promise<void> };
}

/**
 * Group commit: items submitted while the commits in progress run wait and are committed together
 * by the next one, so a busy worker pays one transaction per group instead of one per item, and an
 * idle one adds no wait (or the `linger` it is given). When a group fails, its items are committed one
 * by one, so only the item at fault is rejected.
 */
export class GroupCommit<T, R> {
  private readonly pending: Pending<T, R>[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly sizeOf: (item: T) => number;
  private readonly maxGroupSize: number;
  private readonly concurrency: number;
  private readonly linger: GroupCommitOptions<T>['linger'];
  /** A drain is waiting for its first group to form: new items join it. */
  private lingering = false;

  constructor(
    private readonly commit: (items: T[]) => Promise<R[]>,
    options: GroupCommitOptions<T>,
  ) {
    this.maxGroupSize = options.maxGroupSize;
    this.sizeOf = options.sizeOf ?? (() => 1);
    this.concurrency = options.concurrency ?? 1;
    this.linger = options.linger;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.running.size < this.concurrency && !this.lingering) {
        const drain = this.drain().finally(() => this.running.delete(drain));
        this.running.add(drain);
      }
    });
  }

  /** Resolves when everything submitted so far is committed (or rejected). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  private async drain(): Promise<void> {
    await this.firstGroupFormed();
    while (this.pending.length > 0) {
      const group = this.pending.splice(0, this.nextGroupLength());
      try {
        const results = await this.commit(group.map((entry) => entry.item));
        group.forEach((entry, index) => entry.resolve(results[index]));
      } catch (error) {
        if (group.length === 1) group[0].reject(error);
        else await this.commitOneByOne(group);
      }
    }
  }

  /** Without a linger, what completes in this turn of the event loop joins the first group; with one, what comes meanwhile. */
  private async firstGroupFormed(): Promise<void> {
    if (!this.linger?.ms) return new Promise<void>((resolve) => setImmediate(resolve));
    this.lingering = true;
    try {
      await this.linger.wait(this.linger.ms);
    } finally {
      this.lingering = false;
    }
  }

  private nextGroupLength(): number {
    let size = this.sizeOf(this.pending[0].item);
    let length = 1;
    for (; length < this.pending.length; length++) {
      const next = this.sizeOf(this.pending[length].item);
      if (size + next > this.maxGroupSize) break;
      size += next;
    }
    return length;
  }

  // A failed group is retried item by item, so one bad item fails alone.
  private async commitOneByOne(group: readonly Pending<T, R>[]): Promise<void> {
    for (const entry of group) {
      try {
        const [result] = await this.commit([entry.item]);
        entry.resolve(result);
      } catch (error) {
        entry.reject(error);
      }
    }
  }
}
