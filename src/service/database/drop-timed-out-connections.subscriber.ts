import { type AfterQueryEvent, type EntitySubscriberInterface, EventSubscriber } from 'typeorm';

/** mysql2's error for a query that outlived its `timeout`. */
const QUERY_TIMEOUT_CODE = 'PROTOCOL_SEQUENCE_TIMEOUT';

interface PooledConnection {
  destroy(): void;
}

/**
 * mysql2 rejects a query at its timeout but keeps the connection, still waiting for the server's answer,
 * and TypeORM then puts it back in the pool: every later query on it would wait behind the lost one, so a
 * server that never answers again would poison the pool for good. This closes such a connection instead
 * (the server rolls back its open transaction when it sees the close); the pool opens a fresh one on
 * demand, within the connect timeout. Registered on the MySQL/MariaDB DataSource only while query timeouts are on.
 */
@EventSubscriber()
export class DropTimedOutConnections implements EntitySubscriberInterface {
  afterQuery(event: AfterQueryEvent): void {
    if (event.success || (event.error as { code?: unknown } | undefined)?.code !== QUERY_TIMEOUT_CODE) return;
    const connection = (event.queryRunner as { databaseConnection?: Partial<PooledConnection> } | undefined)?.databaseConnection;
    connection?.destroy?.();
  }
}
