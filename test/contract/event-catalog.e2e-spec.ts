import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/service/app.module';
import { readEventSchemas } from '../../src/index';
import { InvalidFieldsException } from '../../src/notifications/common/api/api-errors';
import { WebhookPublisher } from '../../src/notifications/delivery/publishing/webhook-publisher.service';
import { WebhookDelivery } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import type { EventSchemas, JsonSchema } from '../../src/notifications/event-schemas/event-schemas';
import { PublishedEventSchema } from '../../src/notifications/event-schemas/published-event-schema.entity';
import { generateOpenApiTypes } from '../../src/service/scripts/openapi-types';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import { testAppConfig } from '../support/test-app';
import type { TestDatabase } from '../support/test-databases';

const EXAMPLE_CATALOG = readEventSchemas(join(__dirname, '..', '..', 'examples', 'event-catalog'));

const loan = (overrides: Record<string, unknown> = {}) => ({
  loanId: 'L-42',
  currency: 'USD',
  amount: 1000,
  rate: 0.0002,
  periodDays: 2,
  executedAt: '2026-11-22T12:00:00Z',
  ...overrides,
});

describeEachDatabase('event catalog on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { eventSchemas: EXAMPLE_CATALOG });
  let user = 0;
  let userId: number;

  beforeAll(async () => {
    await t.app.listen(0, '127.0.0.1');
  });
  beforeEach(async () => {
    userId = ++user;
    t.receiver.clear();
    await t.enableWebhook(userId, 'LOAN_EXECUTED', `/u${userId}`);
  });

  const event = (payload: unknown) => ({
    userId,
    type: 'LOAN_EXECUTED',
    severity: 'INFO',
    title: 'Loan executed',
    body: '1000 USD',
    payload,
  });
  const stored = async () => ({
    events: await t.dataSource.getRepository(WebhookEvent).countBy({ userId }),
    deliveries: await t.dataSource.getRepository(WebhookDelivery).countBy({ userId }),
  });

  it('delivers a payload that matches its schema, as published', async () => {
    await t.publish({ events: [event(loan())] }).expect(202);
    const [hook] = await t.waitForDelivery({ userId });
    expect(hook.json().payload).toEqual(loan());
  });

  it('answers 400 naming the event index and the field, and stores none of the batch', async () => {
    const response = await t.publish({ events: [event(loan()), event(loan({ amount: '1000' })), event(loan())] }).expect(400);
    expect(response.body.errors).toEqual([{ field: 'events[1].payload.amount', message: 'must be number' }]);
    expect(response.body.message).toBe('events[1].payload.amount must be number');
    const missing = await t.publish({ events: [event(loan({ loanId: undefined }))] }).expect(400);
    expect(missing.body.errors).toEqual([{ field: 'events[0].payload.loanId', message: 'is required' }]);
    // A bare event (no `events`) is named as its other fields are: `payload.<field>`, as `title` would be.
    const omitted = await t.publish({ userId, type: 'LOAN_EXECUTED', severity: 'INFO', title: 'x', body: 'y' }).expect(400);
    expect(omitted.body.errors).toEqual([{ field: 'payload.loanId', message: 'is required' }]);
    const untitled = await t.publish({ ...event(loan()), title: '' }).expect(400);
    expect(untitled.body.errors[0].field).toBe('title');
    expect(await stored()).toEqual({ events: 0, deliveries: 0 });
  });

  it('throws in process naming the event index and the field, and stores none of the call', async () => {
    const publisher = t.app.get(WebhookPublisher);
    const call = publisher.publishMany([event(loan()), event(loan()), event(loan({ extra: true }))] as never);
    await expect(call).rejects.toBeInstanceOf(InvalidFieldsException);
    await expect(call).rejects.toMatchObject({
      fieldErrors: [{ field: 'events[2].payload.extra', message: 'is not a field of this event type' }],
    });
    expect(await stored()).toEqual({ events: 0, deliveries: 0 });
  });

  it('refuses payloads built to break the validator before they reach it, storing nothing', async () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let level = 0; level < 40; level++) deep = { child: deep };
    const tooDeep = await t.publish({ events: [event(loan()), event(deep)] }).expect(400);
    expect(tooDeep.body.errors[0].field).toBe('events[1].payload');
    const huge = await t.publish({ events: [event(loan()), event({ ids: Array.from({ length: 20_000 }, (_, i) => i) })] }).expect(400);
    expect(huge.body.errors[0].field).toBe('events[1].payload');
    const longString = await t.publish(event(loan({ loanId: `${'a-'.repeat(8000)}!` }))).expect(400);
    expect(longString.body.errors).toEqual([{ field: 'payload.loanId', message: 'must match pattern "^[A-Za-z0-9_-]{1,64}$"' }]);
    expect(await stored()).toEqual({ events: 0, deliveries: 0 });
  });

  it('records each registered version as published', async () => {
    const rows = await t.dataSource.getRepository(PublishedEventSchema).find();
    expect(rows).toHaveLength(29);
    const executed = rows.find((row) => row.type === 'LOAN_EXECUTED')!;
    expect(executed.version).toBe(1);
    expect(JSON.parse(executed.schema)).toEqual(EXAMPLE_CATALOG.LOAN_EXECUTED!.schema);
  });

  it('documents one webhook per event type with its payload schema, which openapi-typescript turns into types', async () => {
    const { body } = await t.http().get('/api/docs-json').expect(200);
    expect(Object.keys(body.webhooks)).toHaveLength(25);
    expect(body.webhooks).not.toHaveProperty('fundingEvent');
    expect(body.webhooks).not.toHaveProperty('HIGH_UTILIZATION');
    const post = body.webhooks.LOAN_EXECUTED.post;
    expect(post.operationId).toBe('receiveLoanExecuted');
    expect(post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/LoanExecutedEvent' });
    expect(post.parameters.find((p: { name: string }) => p.name === 'X-Service-Type').schema.enum).toEqual(['LOAN_EXECUTED']);
    const schemas = body.components.schemas;
    expect(schemas.LoanExecutedEvent.properties).toEqual({
      type: { type: 'string', const: 'LOAN_EXECUTED' },
      payload: { $ref: '#/components/schemas/LoanExecutedPayload' },
    });
    expect(schemas.LoanExecutedPayload).toMatchObject({ 'x-schema-version': 1, required: expect.arrayContaining(['loanId', 'amount']) });
    expect(schemas.DailyDigestPayload.properties.currencies.items).toEqual({
      $ref: '#/components/schemas/DailyDigestPayload_CurrencySummary',
    });
    expect(JSON.stringify(body)).not.toContain('#/$defs');

    // A receiver's code against the generated types: a payload that breaks the schema does not compile.
    const dir = mkdtempSync(join(tmpdir(), 'nw-typed-events-'));
    try {
      writeFileSync(join(dir, 'webhook-events.ts'), await generateOpenApiTypes(body));
      writeFileSync(
        join(dir, 'receiver.ts'),
        [
          "import type { components } from './webhook-events';",
          "type LoanExecuted = components['schemas']['LoanExecutedEvent'];",
          "type Digest = components['schemas']['DailyDigestEvent'];",
          'export const amount = (event: LoanExecuted): string => event.payload.amount.toFixed(2);',
          'export const earned = (event: Digest): number[] => event.payload.currencies.map((c) => c.interestEarned);',
          "export const type: LoanExecuted['type'] = 'LOAN_EXECUTED';",
          '// @ts-expect-error amount is a number',
          "export const wrong: LoanExecuted['payload']['amount'] = '1000';",
          "// @ts-expect-error the body's type is this event's",
          "export const other: LoanExecuted['type'] = 'RATE_SPIKE';",
        ].join('\n'),
      );
      const program = ts.createProgram([join(dir, 'receiver.ts')], {
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        target: ts.ScriptTarget.ES2022,
      });
      expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Starts the standalone app on `database` with a catalog, answers the published schemas and stops it; throws what a refused start throws. */
async function startWith(database: TestDatabase, eventSchemas: EventSchemas): Promise<PublishedEventSchema[]> {
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forConfig(testAppConfig(database.config), { resolver: async () => [], eventSchemas })],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
    return await app
      .get(DataSource)
      .getRepository(PublishedEventSchema)
      .find({ order: { version: 'ASC' } });
  } finally {
    await app
      .get(DataSource)
      .destroy()
      .catch(() => undefined);
    await app.close().catch(() => undefined);
  }
}

describeEachDatabase('published event schemas on $name', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await persistentDatabase(kind);
  });
  afterAll(() => database?.drop());

  const v1: JsonSchema = {
    type: 'object',
    required: ['loanId', 'amount'],
    properties: { loanId: { type: 'string' }, amount: { type: 'number' } },
  };
  const catalog = (version: number, schema: JsonSchema): EventSchemas => ({ LOAN_EXECUTED: { version, schema } });

  it('refuses a start that removes or retypes a field of a published version, and accepts it with the version raised', async () => {
    await startWith(database, catalog(1, v1));

    const { amount: _amount, ...withoutAmount } = v1.properties as Record<string, unknown>;
    const removed = { ...v1, required: ['loanId'], properties: withoutAmount };
    await expect(startWith(database, catalog(1, removed))).rejects.toThrow(
      'Event schema of LOAN_EXECUTED version 1 breaks the schema published under that version (removes amount): ' +
        'keep those fields, or raise its version to publish the change',
    );
    const retyped = { ...v1, properties: { ...(v1.properties as object), amount: { type: 'string' } } };
    await expect(startWith(database, catalog(1, retyped))).rejects.toThrow('(retypes amount from number to string)');

    const rows = await startWith(database, catalog(2, removed));
    expect(rows.map((row) => [row.type, row.version])).toEqual([
      ['LOAN_EXECUTED', 1],
      ['LOAN_EXECUTED', 2],
    ]);
    // Both versions stay published: a start on version 1 (a rollback) still has to keep its fields.
    await startWith(database, catalog(1, v1));
  });

  it('accepts a compatible change under the same version, and then holds later starts to it', async () => {
    const added = { ...v1, properties: { ...(v1.properties as object), note: { type: 'string' } } };
    const rows = await startWith(database, catalog(1, added));
    expect(JSON.parse(rows[0].schema)).toEqual(added);
    await expect(startWith(database, catalog(1, v1))).rejects.toThrow('(removes note)');
    // Leaving the type out would free its published fields: refused, until a raised version says so.
    await expect(startWith(database, {})).rejects.toThrow(
      'Event schema of LOAN_EXECUTED: version 2 was published and the catalog has none: keep its schema, or publish version 3',
    );
    await startWith(database, catalog(3, { type: 'object' }));
  });
});
