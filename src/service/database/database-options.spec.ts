import { DbType } from '../config/environment-variables';
import { databaseOptions } from './database-options';

const URL = 'mysql://root@127.0.0.1:3306/notifications';

describe('databaseOptions on MySQL/MariaDB', () => {
  it('bounds the pool and every wait by default: 10 connections, 1000 calls queued, 5 s to connect, 30 s a query', () => {
    expect(databaseOptions({ type: DbType.mysql, url: URL })).toMatchObject({
      type: 'mysql',
      poolSize: 10,
      connectTimeout: 5_000,
      enableQueryTimeout: true,
      maxQueryExecutionTime: 30_000,
      extra: { queueLimit: 1_000 },
    });
  });

  it('passes the tuning through to the driver; 0 turns the queue limit and the query timeout off', () => {
    const options = databaseOptions({
      type: DbType.mariadb,
      url: URL,
      tuning: { poolSize: 3, poolQueueLimit: 0, connectTimeoutMs: 800, queryTimeoutMs: 0 },
    });
    expect(options).toMatchObject({ type: 'mariadb', poolSize: 3, connectTimeout: 800, extra: { queueLimit: 0 } });
    expect(options).not.toHaveProperty('enableQueryTimeout');
    expect(options).not.toHaveProperty('maxQueryExecutionTime');
  });
});
