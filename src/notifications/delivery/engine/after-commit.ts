import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';

/**
 * Runs work once the host's transaction has committed, and drops it when it rolls back: a TypeORM subscriber on the
 * module's DataSource (TypeORM calls `afterTransactionCommit` after every COMMIT and after every savepoint release; the
 * work waits for the outermost commit). The work starts after the commit returns, never delaying the host's call.
 */
@Injectable()
export class AfterCommit implements EntitySubscriberInterface {
  private readonly pending = new WeakMap<QueryRunner, (() => void)[]>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    dataSource.subscribers.push(this);
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

  /** Runs `work` once `runner`'s transaction commits; never when it rolls back. */
  defer(runner: QueryRunner, work: () => void): void {
    const list = this.pending.get(runner) ?? [];
    list.push(work);
    this.pending.set(runner, list);
  }

  afterTransactionCommit({ queryRunner }: TransactionCommitEvent): void {
    if (queryRunner.isTransactionActive) return; // a savepoint was released: the outer transaction may still roll back
    const work = this.pending.get(queryRunner);
    this.pending.delete(queryRunner);
    for (const run of work ?? []) setImmediate(run);
  }

  afterTransactionRollback({ queryRunner }: TransactionRollbackEvent): void {
    if (!queryRunner.isTransactionActive) this.pending.delete(queryRunner);
  }
}
