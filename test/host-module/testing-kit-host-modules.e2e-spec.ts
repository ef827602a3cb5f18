import { Injectable, Module } from '@nestjs/common';
import { InjectRepository, TypeOrmModule } from '@nestjs/typeorm';
import { Column, DataSource, Entity, type MigrationInterface, PrimaryGeneratedColumn, type QueryRunner, type Repository } from 'typeorm';
import { EventType, Severity, WebhookPublisher } from '@funding/notification-webhooks';
import { bootTestNotifications, type TestNotifications } from '@funding/notification-webhooks/testing';

/** A host module with a table of its own, as in "Testing your integration" of docs/host-apps.md. */
@Entity('orders')
class Order {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'integer' })
  userId!: number;

  @Column({ type: 'integer' })
  amount!: number;
}

@Injectable()
class OrdersService {
  constructor(
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly webhooks: WebhookPublisher,
  ) {}

  async place(userId: number, amount: number): Promise<Order> {
    const order = await this.orders.save(this.orders.create({ userId, amount }));
    await this.webhooks.publish({
      userId,
      type: EventType.LOAN_EXECUTED,
      severity: Severity.INFO,
      title: 'Order placed',
      body: `${amount} USD`,
      payload: { orderId: order.id },
    });
    return order;
  }
}

@Module({ imports: [TypeOrmModule.forFeature([Order])], providers: [OrdersService] })
class OrdersModule {}

/** The host's own migration: its table as production creates it (a column the entity does not map included). */
class CreateOrders1764000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "orders" ("id" integer PRIMARY KEY AUTOINCREMENT NOT NULL, "userId" integer NOT NULL, "amount" integer NOT NULL, "note" varchar(64) NOT NULL DEFAULT ('from the migration'))`,
    );
  }
  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "orders"`);
  }
}

describe('testing kit with a host module that has its own entities', () => {
  let kit: TestNotifications;

  beforeAll(async () => {
    kit = await bootTestNotifications({ imports: [OrdersModule] });
  });
  afterAll(() => kit.close());

  it("creates the host's tables on the default in-memory database, next to the module's", async () => {
    const secret = await kit.enableWebhook(7, EventType.LOAN_EXECUTED);
    const order = await kit.app.get(OrdersService).place(7, 250);

    const [hook] = await kit.waitForDelivery({ userId: 7 });
    expect(hook.isSignedWith(secret)).toBe(true);
    expect(hook.json()).toMatchObject({ type: 'LOAN_EXECUTED', userId: 7, payload: { orderId: order.id } });
    expect(await kit.app.get(DataSource).getRepository(Order).findOneBy({ id: order.id })).toMatchObject({ userId: 7, amount: 250 });
  });
});

describe("testing kit with a host module and the host's migrations", () => {
  let kit: TestNotifications;

  beforeAll(async () => {
    kit = await bootTestNotifications({
      imports: [OrdersModule],
      database: { type: 'better-sqlite3', database: ':memory:', migrations: [CreateOrders1764000000000] },
    });
  });
  afterAll(() => kit.close());

  it("runs the host's migrations next to the module's: the table is the migration's", async () => {
    const secret = await kit.enableWebhook(8, EventType.LOAN_EXECUTED);
    const order = await kit.app.get(OrdersService).place(8, 300);

    const [hook] = await kit.waitForDelivery({ userId: 8 });
    expect(hook.isSignedWith(secret)).toBe(true);
    const [row] = await kit.app.get(DataSource).query('SELECT "note" FROM "orders" WHERE "id" = ?', [order.id]);
    expect(row).toEqual({ note: 'from the migration' });
  });
});
