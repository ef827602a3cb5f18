import { GroupCommit } from './group-commit';

describe('GroupCommit', () => {
  it('commits items submitted together in one group, and those submitted during that commit in the next', async () => {
    const groups: number[][] = [];
    let release!: () => void;
    let started!: () => void;
    const firstCommitHeld = new Promise<void>((resolve) => (release = resolve));
    const firstCommitStarted = new Promise<void>((resolve) => (started = resolve));
    const commits = new GroupCommit<number, string>(
      async (items) => {
        groups.push(items);
        if (groups.length === 1) {
          started();
          await firstCommitHeld;
        }
        return items.map((item) => `ok ${item}`);
      },
      { maxGroupSize: 100 },
    );

    const first = [commits.submit(1), commits.submit(2)];
    await firstCommitStarted;
    const waiting = [commits.submit(3), commits.submit(4), commits.submit(5)];
    release();

    expect(await Promise.all([...first, ...waiting])).toEqual(['ok 1', 'ok 2', 'ok 3', 'ok 4', 'ok 5']);
    expect(groups).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
  });

  it('splits groups at the maximum size', async () => {
    const groups: number[][] = [];
    const commits = new GroupCommit<number, number>(async (items) => (groups.push(items), items), { maxGroupSize: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((item) => commits.submit(item)));
    expect(groups).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('counts the maximum size with sizeOf, and never leaves an item larger than it out', async () => {
    const groups: string[][] = [];
    const commits = new GroupCommit<string, string>(async (items) => (groups.push(items), items), {
      maxGroupSize: 4,
      sizeOf: (item) => item.length,
    });
    await Promise.all(['ab', 'c', 'd', 'efghij', 'k', 'lmn'].map((item) => commits.submit(item)));
    expect(groups).toEqual([['ab', 'c', 'd'], ['efghij'], ['k', 'lmn']]);
  });

  it('commits up to `concurrency` groups at once, the next one taking everything submitted meanwhile', async () => {
    const groups: number[][] = [];
    const held: (() => void)[] = [];
    const commits = new GroupCommit<number, number>(
      async (items) => {
        groups.push(items);
        if (groups.length <= 2) await new Promise<void>((resolve) => held.push(resolve));
        return items;
      },
      { maxGroupSize: 100, concurrency: 2 },
    );
    const first = commits.submit(1);
    await vi.waitFor(() => expect(groups).toEqual([[1]]));
    const second = commits.submit(2);
    await vi.waitFor(() => expect(groups).toEqual([[1], [2]]));
    const waiting = [commits.submit(3), commits.submit(4)];
    held.forEach((release) => release());
    expect(await Promise.all([first, second, ...waiting])).toEqual([1, 2, 3, 4]);
    expect(groups).toEqual([[1], [2], [3, 4]]);
    await commits.idle();
  });

  it('retries a failed group item by item, so only the item at fault is rejected', async () => {
    const commits = new GroupCommit<number, number>(
      async (items) => {
        if (items.includes(2)) throw new Error(`cannot store ${items.join(',')}`);
        return items;
      },
      { maxGroupSize: 10 },
    );
    const results = await Promise.allSettled([1, 2, 3].map((item) => commits.submit(item)));
    expect(results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: new Error('cannot store 2') },
      { status: 'fulfilled', value: 3 },
    ]);
  });

  it('with a linger, a drain that starts waits that long for company, items submitted meanwhile joining its group', async () => {
    const groups: number[][] = [];
    const lingers: (() => void)[] = [];
    const held: (() => void)[] = [];
    const commits = new GroupCommit<number, number>(
      async (items) => {
        groups.push(items);
        if (groups.length === 2) await new Promise<void>((resolve) => held.push(resolve));
        return items;
      },
      { maxGroupSize: 100, concurrency: 2, linger: { ms: 20, wait: () => new Promise<void>((resolve) => lingers.push(resolve)) } },
    );
    const first = [commits.submit(1)];
    await vi.waitFor(() => expect(lingers).toHaveLength(1));
    first.push(commits.submit(2), commits.submit(3)); // they join the lingering drain: no second drain, no second wait
    await new Promise((resolve) => setImmediate(resolve));
    expect({ lingers: lingers.length, groups }).toEqual({ lingers: 1, groups: [] });
    lingers[0]();
    expect(await Promise.all(first)).toEqual([1, 2, 3]);
    expect(groups).toEqual([[1, 2, 3]]);

    const second = commits.submit(4); // idle again: lingers again, then commits and is held
    await vi.waitFor(() => expect(lingers).toHaveLength(2));
    lingers[1]();
    await vi.waitFor(() => expect(held).toHaveLength(1));
    const third = commits.submit(5); // the second commit slot is free: a drain starts there and lingers while [4] commits
    await vi.waitFor(() => expect(lingers).toHaveLength(3));
    lingers[2]();
    expect(await third).toBe(5);
    held[0]();
    expect(await second).toBe(4);
    expect(groups).toEqual([[1, 2, 3], [4], [5]]);
    await commits.idle();
  });
});
