import type { QueryRunner } from 'typeorm';
import { QueryRunnerTransactionStillOpenError, SerialTransactions } from './serial-transactions';

const PATIENCE_MS = 1_000;

/** SQLite's one query runner, as far as transactions go: BEGIN at depth 0, SAVEPOINTs deeper. */
function fakeRunner(log: string[]) {
  let depth = 0;
  const runner = {
    isTransactionActive: false,
    startTransaction: async () => {
      log.push(depth === 0 ? 'BEGIN' : 'SAVEPOINT');
      depth++;
      runner.isTransactionActive = true;
    },
    commitTransaction: async () => {
      depth--;
      log.push(depth === 0 ? 'COMMIT' : 'RELEASE');
      runner.isTransactionActive = depth > 0;
    },
    rollbackTransaction: async () => {
      depth--;
      log.push(depth === 0 ? 'ROLLBACK' : 'ROLLBACK TO');
      runner.isTransactionActive = depth > 0;
    },
  };
  return runner as typeof runner & QueryRunner;
}

describe('SerialTransactions on one connection', () => {
  let log: string[];
  let runner: ReturnType<typeof fakeRunner>;
  let serial: SerialTransactions;
  const work = (name: string) => () => Promise.resolve(log.push(name)).then(() => name);

  beforeEach(() => {
    vi.useFakeTimers();
    log = [];
    runner = fakeRunner(log);
    serial = new SerialTransactions(true, PATIENCE_MS);
    serial.queueQueryRunner(runner);
  });
  afterEach(() => vi.useRealTimers());

  it("runs a transaction asked during a query runner's transaction once that one rolls back", async () => {
    await runner.startTransaction();
    const waiting = serial.run(work('the module writes'));
    await vi.advanceTimersByTimeAsync(PATIENCE_MS - 1);
    expect(log).toEqual(['BEGIN']);

    await runner.rollbackTransaction();
    await expect(waiting).resolves.toBe('the module writes');
    expect(log).toEqual(['BEGIN', 'ROLLBACK', 'the module writes']);
  });

  it("refuses a transaction still waiting after the patience (the runner's own flow may await it), and never runs it", async () => {
    await runner.startTransaction();
    const waiting = serial.run(work('the module writes'));
    const refused = expect(waiting).rejects.toBeInstanceOf(QueryRunnerTransactionStillOpenError);
    await vi.advanceTimersByTimeAsync(PATIENCE_MS);
    await refused;
    await expect(waiting).rejects.toThrow('{ manager: queryRunner.manager }');

    await runner.commitTransaction();
    await expect(serial.run(work('next'))).resolves.toBe('next');
    expect(log).toEqual(['BEGIN', 'COMMIT', 'next']);
  });

  it("nests a query runner's transaction started while one is open, and holds the turn until the outermost ends", async () => {
    await runner.startTransaction();
    await runner.startTransaction();
    await runner.commitTransaction();
    const waiting = serial.run(work('the module writes'));
    await vi.advanceTimersByTimeAsync(0);
    expect(log).toEqual(['BEGIN', 'SAVEPOINT', 'RELEASE']);

    await runner.commitTransaction();
    await expect(waiting).resolves.toBe('the module writes');
    expect(log).toEqual(['BEGIN', 'SAVEPOINT', 'RELEASE', 'COMMIT', 'the module writes']);
  });

  it('lets a query runner start its transaction only once the callback transaction ahead of it has ended', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const callback = serial.run(async () => {
      log.push('callback begins');
      await held;
      log.push('callback ends');
    });
    const started = runner.startTransaction();
    await vi.advanceTimersByTimeAsync(PATIENCE_MS * 10); // no patience limit behind a callback's turn
    expect(log).toEqual(['callback begins']);

    release();
    await callback;
    await started;
    expect(log).toEqual(['callback begins', 'callback ends', 'BEGIN']);
    expect(serial.inside()).toBe(false);
  });
});
