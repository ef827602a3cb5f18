import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type SerialTransactions, serialTransactionsOf } from '../../common/database/serial-transactions';
import type {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';

/**
 * Runs work once the host's transaction has committed, and drops it when it rolls back (running its rollback work
 * instead, if any): a TypeORM subscriber on the
 * module's DataSource (TypeORM calls `afterTransactionCommit` after every COMMIT and after every savepoint release; the
 * work waits for the outermost commit). The work starts after the commit returns, never delaying the host's call.
 *
 * On SQLite it also puts the DataSource's transactions, query runners' included, in one queue
 * ({@link serialTransactionsOf}): the module's own and the host's then never share the one connection, so no rollback
 * takes another caller's work along.
 */
@Injectable()
export class AfterCommit implements EntitySubscriberInterface {
  private readonly pending = new WeakMap<QueryRunner, { committed: () => void; rolledBack?: () => void }[]>();
  private readonly serial: SerialTransactions;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    dataSource.subscribers.push(this);
    this.serial = serialTransactionsOf(dataSource);
  }

  /**
   * Refuses a publish without `manager` from inside the callback of a transaction of the module's DataSource, on every
   * database. It cannot mean the same on both otherwise: on MySQL/MariaDB it would commit on a connection of its own
   * and outlive the host's rollback, while on SQLite the one connection is inside the host's transaction, so it could
   * only join it (and vanish with its rollback after answering) or wait for it to end (which the host's callback, awaiting
   * the publish, never does). Either way the caller most likely meant to pass its manager.
   */
  refuseInsideTransaction(): void {
    if (this.serial.inside())
      throw new TypeError(
        "publish() without { manager } inside a transaction of NotificationsModule's DataSource: pass { manager } (your " +
          "transaction's manager) to store the events with your rows, or publish after the transaction ends",
      );
  }

  /** The query runner of a manager inside a transaction of the module's DataSource; a clear error otherwise. */
  transactionOf(manager: EntityManager): QueryRunner {
    const runner = manager.queryRunner;
    if (manager.connection !== this.dataSource)
      throw new TypeError("publish({ manager }): the manager belongs to another DataSource than NotificationsModule's");
    if (!runner?.isTransactionActive)
      throw new TypeError(
        'publish({ manager }): the manager is not inside a transaction; pass the one dataSource.transaction(...) gives you',
      );
    return runner;
  }

  /** Runs `work` once `runner`'s transaction commits; never when it rolls back, then `rolledBack` runs instead. */
  defer(runner: QueryRunner, work: () => void, rolledBack?: () => void): void {
    const list = this.pending.get(runner) ?? [];
    list.push({ committed: work, rolledBack });
    this.pending.set(runner, list);
  }

  afterTransactionCommit({ queryRunner }: TransactionCommitEvent): void {
    if (queryRunner.isTransactionActive) return; // a savepoint was released: the outer transaction may still roll back
    const work = this.pending.get(queryRunner);
    this.pending.delete(queryRunner);
    for (const { committed } of work ?? []) setImmediate(committed);
  }

  afterTransactionRollback({ queryRunner }: TransactionRollbackEvent): void {
    if (queryRunner.isTransactionActive) return; // back to a savepoint: the outer transaction may still commit
    const work = this.pending.get(queryRunner);
    this.pending.delete(queryRunner);
    for (const { rolledBack } of work ?? []) if (rolledBack) setImmediate(rolledBack);
  }
}
