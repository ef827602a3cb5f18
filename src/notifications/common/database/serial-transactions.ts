import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager } from 'typeorm';
import { isMySql } from './is-mysql';

/** The transaction a piece of work runs in; `open` turns false when it ends, for work it started that outlives it. */
interface Turn {
  open: boolean;
}

/**
 * On SQLite, TypeORM gives every caller the one connection's query runner, so a transaction started while another
 * is open becomes a SAVEPOINT of it, and a rollback of the outer one takes the inner caller's committed work along.
 * This queue makes `EntityManager.transaction` (and so `DataSource.transaction`) of the module's DataSource run
 * one at a time, in the order asked, as separate connections would; a transaction started by work running inside an
 * open one (a nested call) joins it, as before, instead of waiting for itself.
 */
export class SerialTransactions {
  private readonly turns = new AsyncLocalStorage<Turn>();
  private tail: Promise<unknown> = Promise.resolve();

  /** The open transaction the caller runs in, if any: its manager (the one connection's). */
  joinable(dataSource: DataSource): EntityManager | undefined {
    return this.turns.getStore()?.open ? dataSource.createQueryRunner().manager : undefined;
  }

  run<T>(transaction: () => Promise<T>): Promise<T> {
    if (this.turns.getStore()?.open) return transaction();
    const turn: Turn = { open: true };
    const result = this.tail.then(() =>
      this.turns.run(turn, () =>
        transaction().finally(() => {
          turn.open = false;
        }),
      ),
    );
    this.tail = result.catch(() => undefined);
    return result;
  }
}

const queues = new WeakMap<DataSource, SerialTransactions>();

/**
 * The transaction queue of a SQLite DataSource, installed on first use (idempotent); undefined on MySQL/MariaDB,
 * whose pool gives each transaction a connection of its own.
 */
export function serialTransactionsOf(dataSource: DataSource): SerialTransactions | undefined {
  if (isMySql(dataSource)) return undefined;
  const installed = queues.get(dataSource);
  if (installed) return installed;
  const serial = new SerialTransactions();
  const manager = dataSource.manager;
  const transaction = manager.transaction.bind(manager) as (...args: unknown[]) => Promise<unknown>;
  manager.transaction = ((...args: unknown[]) => serial.run(() => transaction(...args))) as EntityManager['transaction'];
  queues.set(dataSource, serial);
  return serial;
}
