import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { WEBHOOK_EVENT_TYPES } from '../../src/notifications/catalog/event-catalog';
import { serialTransactionsOf } from '../../src/notifications/common/database/serial-transactions';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import type { Lease, NewEvent } from '../../src/notifications/delivery/engine/outbox-store';
import { describeEachDatabase } from '../support/each-database';
import type { TestDatabase } from '../support/test-databases';

/** Instances publishing at once, each on a connection pool of its own (one on SQLite: the module's single connection). */
const INSTANCES = 4;
const CALLS_PER_INSTANCE = 15;
const NOW = 1_800_000_000_000;
const [TYPE] = WEBHOOK_EVENT_TYPES;

class RolledBack extends Error {}

describeEachDatabase('sequence numbers under concurrent publishes on $name', (kind) => {
  let database: TestDatabase;
  const dataSources: DataSource[] = [];

  beforeAll(async () => {
    database = await kind.create();
    const count = kind.name === 'sqlite' ? 1 : INSTANCES;
    for (let i = 0; i < count; i++) {
      const dataSource = new DataSource(databaseOptions(database.config));
      await dataSource.initialize(); // the first one migrates
      serialTransactionsOf(dataSource);
      dataSources.push(dataSource);
    }
  });
  afterAll(async () => {
    for (const dataSource of dataSources) await dataSource.destroy();
    await database.drop();
  });

  const stream = async (userId: number, url: string) => {
    const dataSource = dataSources[0];
    await dataSource.query('INSERT INTO webhook_streams (user_id, url_hash) VALUES (?, ?)', [userId, url]);
    const [row] = await dataSource.query<{ id: number | string }[]>('SELECT id FROM webhook_streams WHERE url_hash = ?', [url]);
    return Number(row.id);
  };
  const lease = (): Lease => ({ token: randomUUID(), now: NOW, until: NOW });
  const events = (streamIds: readonly number[]): NewEvent[] =>
    streamIds.map((streamId) => ({ id: randomUUID(), userId: 1, type: TYPE, body: '{}', streamId }));

  it('numbers each stream 1..N, without gaps or duplicates, in the order the rows were inserted, rollbacks included', async () => {
    const [a, b] = [await stream(1, 'a'.repeat(64)), await stream(1, 'b'.repeat(64))];
    const calls = dataSources.flatMap((dataSource, instance) => {
      const store = new DeliveryOutboxRepository(dataSource);
      const perInstance = kind.name === 'sqlite' ? CALLS_PER_INSTANCE * INSTANCES : CALLS_PER_INSTANCE;
      return Array.from({ length: perInstance }, (_, call) => async () => {
        // Streams in either order within a call, some calls inside a transaction that rolls back.
        const published = events(call % 3 === 0 ? [a, b, a] : call % 3 === 1 ? [b, a] : [a]);
        if ((call + instance) % 5 !== 4) return void (await store.enqueue(published, () => 'due', lease()));
        await dataSource
          .transaction(async (manager) => {
            await store.enqueueWithin(manager, published, () => 'due', lease());
            throw new RolledBack();
          })
          .catch((error: unknown) => {
            if (!(error instanceof RolledBack)) throw error;
          });
      });
    });
    await Promise.all(calls.map((call) => call()));

    const rows = await dataSources[0].query<{ id: number | string; stream_id: number | string; sequence: number | string }[]>(
      'SELECT id, stream_id, sequence FROM webhook_deliveries ORDER BY id',
    );
    for (const streamId of [a, b]) {
      const numbers = rows.filter((row) => Number(row.stream_id) === streamId).map((row) => Number(row.sequence));
      expect(numbers.length).toBeGreaterThan(30);
      expect(numbers, `stream ${streamId} in insert order`).toEqual(numbers.map((_, i) => i + 1));
      const [last] = await dataSources[0].query<{ n: number | string }[]>('SELECT last_sequence AS n FROM webhook_streams WHERE id = ?', [
        streamId,
      ]);
      expect(Number(last.n)).toBe(numbers.length);
    }
  }, 60_000);
});
