interface Pending<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit: items submitted while a commit runs wait and are committed together by the next
 * one, so a busy worker pays one transaction per group instead of one per item. When a group fails,
 * its items are committed one by one, so only the item at fault is rejected.
 */
export class GroupCommit<T, R> {
  private pending: Pending<T, R>[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly commit: (items: T[]) => Promise<R[]>,
    private readonly maxGroupSize: number,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.running ??= this.drain();
    });
  }

  /** Resolves when everything submitted so far is committed (or rejected). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve)); // what completes in this turn of the event loop joins the first group
    while (this.pending.length > 0) {
      const group = this.pending.splice(0, this.maxGroupSize);
      try {
        const results = await this.commit(group.map((entry) => entry.item));
        group.forEach((entry, index) => entry.resolve(results[index]));
      } catch (error) {
        if (group.length === 1) group[0].reject(error);
        else await this.commitOneByOne(group);
      }
    }
    this.running = null;
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
