import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { isMySql } from './is-mysql';

/** The transaction a piece of work runs in; `open` turns false when it ends, for work it started that outlives it. */
interface Turn {
  open: boolean;
}

/** A transaction a query runner started by hand (`queryRunner.startTransaction()`), from its turn to its end. */
interface RunnerTurn {
  /** Resolves when the transaction has committed or rolled back (or could not start). */
  readonly ended: Promise<void>;
  end(): void;
}

/**
 * How long a transaction waits for a query runner's transaction that was open or queued when it asked, before giving up
 * (SQLite only). Such a transaction cannot be told apart from the caller's own (see {@link SerialTransactions}); a
 * bound turns what would be a deadlock into an error, as MySQL's lock wait timeout does (50 s there; a caller inside a
 * transaction deserves its answer sooner).
 */
export const RUNNER_TURN_PATIENCE_MS = 10_000;

/** The refusal of a transaction that waited {@link RUNNER_TURN_PATIENCE_MS} for a query runner's transaction. */
export class QueryRunnerTransactionStillOpenError extends Error {
  constructor(patienceMs: number) {
    super(
      `A transaction of a query runner (queryRunner.startTransaction()) has held SQLite's one connection for ${patienceMs} ms ` +
        'while this call waited for it. If the call runs inside that transaction, pass its manager ' +
        '(publish(event, { manager: queryRunner.manager })) or make the call after it commits; nothing of this call was stored.',
    );
    this.name = 'QueryRunnerTransactionStillOpenError';
  }
}

/**
 * On SQLite, TypeORM gives every caller the one connection's query runner, so a transaction started while another
 * is open becomes a SAVEPOINT of it, and a rollback of the outer one takes the inner caller's committed work along.
 * This queue makes the DataSource's transactions run one at a time, in the order asked, as separate connections would:
 * `EntityManager.transaction` (and so `DataSource.transaction`), and transactions a query runner starts by hand, which
 * hold their turn from `startTransaction()` to the commit or rollback that ends them.
 *
 * A transaction started by work running inside an open callback (a nested call) joins it, as TypeORM nests it, instead
 * of waiting for itself; AsyncLocalStorage tells the callback's work from other callers'. A query runner's transaction
 * has no callback to scope, so the work of the flow that started it cannot be told from another caller's: every other
 * transaction waits for it, but at most {@link RUNNER_TURN_PATIENCE_MS}, since the waiting call may be the one its own
 * transaction awaits. A query runner transaction started while another holds the connection nests in it (a SAVEPOINT,
 * TypeORM's behaviour on SQLite): it is most likely the same flow's nested transaction, and the host's to order.
 *
 * On MySQL/MariaDB nothing is queued (the pool gives each transaction a connection of its own); callbacks are still
 * tracked, so that {@link inside} answers the same on every database.
 */
export class SerialTransactions {
  private readonly turns = new AsyncLocalStorage<Turn>();
  private tail: Promise<unknown> = Promise.resolve();
  /** Query runner transactions queued or holding the connection. */
  private readonly runnerTurns = new Set<RunnerTurn>();

  constructor(
    private readonly oneConnection: boolean,
    private readonly patienceMs = RUNNER_TURN_PATIENCE_MS,
  ) {}

  /** Whether the caller runs inside the callback of an open transaction of the DataSource. */
  inside(): boolean {
    return this.turns.getStore()?.open === true;
  }

  run<T>(transaction: () => Promise<T>): Promise<T> {
    if (this.inside()) return transaction();
    const turn: Turn = { open: true };
    const inTurn = () =>
      this.turns.run(turn, () =>
        transaction().finally(() => {
          turn.open = false;
        }),
      );
    return this.oneConnection ? this.queued(inTurn) : inTurn();
  }

  /**
   * Queues the transactions `runner` starts by hand (SQLite's one query runner, which `EntityManager.transaction`
   * uses too): from the turn's start to the end of the outermost transaction, nothing else of the DataSource's runs.
   */
  queueQueryRunner(runner: QueryRunner): void {
    const start = runner.startTransaction.bind(runner);
    const commit = runner.commitTransaction.bind(runner);
    const rollback = runner.rollbackTransaction.bind(runner);
    let holding: RunnerTurn | undefined;
    const endIfOver = () => {
      if (!holding || runner.isTransactionActive) return; // a savepoint ended: the outermost transaction goes on
      holding.end();
      holding = undefined;
    };
    runner.startTransaction = async (isolationLevel) => {
      // EntityManager.transaction's own call (its callback's turn is taken already), or a nested transaction.
      if (this.inside() || holding) return start(isolationLevel);
      let end!: () => void;
      const ended = new Promise<void>((resolve) => (end = resolve));
      const turn: RunnerTurn = { ended, end: () => end() };
      this.runnerTurns.add(turn);
      void ended.then(() => this.runnerTurns.delete(turn));
      try {
        await this.queued(() => {
          holding = turn;
          return start(isolationLevel);
        }, turn);
      } catch (error) {
        if (holding === turn) holding = undefined;
        turn.end();
        throw error;
      }
    };
    runner.commitTransaction = () => commit().finally(endIfOver);
    runner.rollbackTransaction = () => rollback().finally(endIfOver);
  }

  /**
   * Runs `work` in its turn. The next turn starts when `work` settles, or, for a query runner's turn, when its
   * transaction ends. Waiting behind a query runner's transaction, it gives up after the patience, and `work` never runs.
   */
  private queued<T>(work: () => Promise<T>, own?: RunnerTurn): Promise<T> {
    const ahead = [...this.runnerTurns].filter((turn) => turn !== own);
    let gaveUp = false;
    const result = this.tail.then(() => (gaveUp ? (undefined as T) : work()));
    this.tail = (own ? result.then(() => own.ended) : result).catch(() => undefined);
    if (ahead.length === 0) return result;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        gaveUp = true;
        reject(new QueryRunnerTransactionStillOpenError(this.patienceMs));
      }, this.patienceMs);
      timer.unref();
      void Promise.all(ahead.map((turn) => turn.ended)).then(() => clearTimeout(timer));
      result.then(resolve, reject);
    });
  }
}

const queues = new WeakMap<DataSource, SerialTransactions>();

/**
 * The transaction tracking of a DataSource, installed on first use (idempotent): a queue on SQLite; on MySQL/MariaDB,
 * whose pool gives each transaction a connection of its own, only the callbacks' scope.
 */
export function serialTransactionsOf(dataSource: DataSource): SerialTransactions {
  const installed = queues.get(dataSource);
  if (installed) return installed;
  const oneConnection = !isMySql(dataSource);
  const serial = new SerialTransactions(oneConnection);
  const manager = dataSource.manager;
  const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
  manager.transaction = ((...args: unknown[]) => serial.run(() => transaction(...args))) as EntityManager['transaction'];
  if (oneConnection) {
    // The driver makes its one query runner again after a reconnect: each one it makes is queued, once.
    const driver = dataSource.driver;
    const createQueryRunner = driver.createQueryRunner.bind(driver);
    const queued = new WeakSet<QueryRunner>();
    driver.createQueryRunner = (mode) => {
      const runner = createQueryRunner(mode);
      if (!queued.has(runner)) {
        queued.add(runner);
        serial.queueQueryRunner(runner);
      }
      return runner;
    };
  }
  queues.set(dataSource, serial);
  return serial;
}
