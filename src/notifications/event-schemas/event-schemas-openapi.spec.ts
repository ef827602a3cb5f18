import { EventType, WEBHOOK_EVENT_TYPES } from '../catalog/event-catalog';
import { webhookDocumentation } from '../delivery/wire/webhook-openapi';
import type { EventSchemas } from './event-schemas';
import { eventSchemaComponents } from './event-schemas-openapi';

const tree: EventSchemas = {
  [EventType.LOAN_EXECUTED]: {
    version: 3,
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { parent: { $ref: '#' }, fills: { type: 'array', items: { $ref: '#/$defs/Fill' } } },
      $defs: { Fill: { type: 'object', properties: { price: { type: 'number' }, next: { $ref: '#/$defs/Fill' } } } },
    },
  },
};

describe('the OpenAPI of an event catalog', () => {
  it('keeps the one generic webhook without a catalog', () => {
    expect(Object.keys(webhookDocumentation())).toEqual(['fundingEvent']);
    expect(Object.keys(webhookDocumentation({}))).toEqual(['fundingEvent']);
  });

  it('documents every webhook type with one, the types without a schema as a free object', () => {
    const webhooks = webhookDocumentation(tree);
    expect(Object.keys(webhooks)).toEqual([...WEBHOOK_EVENT_TYPES]);
    const schemaOf = (type: string) => (webhooks[type].post!.requestBody as { content: Record<string, { schema: unknown }> }).content;
    expect(schemaOf('LOAN_EXECUTED')['application/json'].schema).toEqual({ $ref: '#/components/schemas/LoanExecutedEvent' });
    expect(schemaOf('RATE_SPIKE')['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookEventBodyDto' });
    expect(webhooks.LOAN_EXECUTED.post!.summary).toContain('payload schema version 3');
  });

  it('turns the root and $defs into components and points every $ref at them, leaving the catalog as it was', () => {
    const before = structuredClone(tree);
    const components = eventSchemaComponents(tree);
    expect(Object.keys(components).sort()).toEqual(['LoanExecutedEvent', 'LoanExecutedPayload', 'LoanExecutedPayload_Fill']);
    expect(components.LoanExecutedPayload).toEqual({
      type: 'object',
      'x-schema-version': 3,
      properties: {
        parent: { $ref: '#/components/schemas/LoanExecutedPayload' },
        fills: { type: 'array', items: { $ref: '#/components/schemas/LoanExecutedPayload_Fill' } },
      },
    });
    expect(components.LoanExecutedPayload_Fill).toEqual({
      type: 'object',
      properties: { price: { type: 'number' }, next: { $ref: '#/components/schemas/LoanExecutedPayload_Fill' } },
    });
    expect(tree).toEqual(before);
  });
});
