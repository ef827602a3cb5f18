// What a frontend team needs from the committed openapi.json to build a settings screen from a generated client.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Schema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly format?: string;
  readonly enum?: readonly string[];
  readonly items?: Schema;
  readonly allOf?: readonly Schema[];
  readonly properties?: Record<string, Schema>;
  readonly description?: string;
}
interface Operation {
  readonly operationId: string;
  readonly summary?: string;
  readonly description?: string;
  readonly parameters?: ReadonlyArray<{ name: string; in: string; schema: Schema }>;
  readonly responses: Record<string, { headers?: Record<string, { schema: Schema; description?: string }> }>;
}
interface Document {
  readonly servers?: ReadonlyArray<{ url: string }>;
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: { schemas: Record<string, Schema> };
}

const document = JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as Document;
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
);
const schemas = document.components.schemas;
/** The named schema a property refers to (nestjs/swagger wraps a `$ref` with siblings in `allOf`). */
const referenced = (property: Schema) => {
  const ref = property.$ref ?? property.allOf?.[0]?.$ref;
  return ref === undefined ? undefined : ref.replace('#/components/schemas/', '');
};
const types = (schema: Schema) => [schema.type].flat().filter((type) => type !== 'null');
const operationNamed = (id: string) => operations.find(({ operation }) => operation.operationId === id)?.operation;

const SERVICE_MANAGED = ['EARNINGS_MILESTONE', 'HIGH_UTILIZATION', 'OFFER_FILLED', 'WITHDRAWAL_DETECTED'];

describe('openapi.json, as a settings screen reads it', () => {
  it('gives every operation an id a client would call and a description', () => {
    expect(operations.map(({ operation }) => operation.operationId).sort()).toEqual([
      'getDelivery',
      'listDeliveries',
      'listEffectivePreferences',
      'listPreferences',
      'listWebhookHealth',
      'publishEvents',
      'recoverDeliveries',
      'redeliver',
      'rotateSigningKey',
      'rotateSigningSecret',
      'sendTestEvent',
      'upsertPreference',
    ]);
    for (const { name, operation } of operations) expect(operation.description?.length, `${name} has no description`).toBeGreaterThan(20);
  });

  it('pages the delivery log with one cursor type: `cursor` takes exactly what `nextCursor` gives', () => {
    const cursor = operationNamed('listDeliveries')!.parameters!.find((p) => p.name === 'cursor')!.schema;
    const nextCursor = schemas.DeliveryPageDto.properties!.nextCursor;
    expect(types(cursor)).toEqual(['string']);
    expect(types(nextCursor)).toEqual(types(cursor));
  });

  it('names the event types that refuse WEBHOOK, so a screen can hide the toggle', () => {
    const webhookTypes = schemas.WebhookEventType.enum!;
    expect(webhookTypes).toHaveLength(25);
    expect(schemas.EventType.enum!.filter((type) => !webhookTypes.includes(type)).sort()).toEqual(SERVICE_MANAGED);
    expect(schemas.WebhookEventType.description).toContain(SERVICE_MANAGED.sort().join(', '));
    // The operations that only make sense for a webhook take only those types.
    for (const schema of ['RotateSecretDto', 'TestSendDto', 'WebhookEventBodyDto']) {
      expect(referenced(schemas[schema].properties!.type), schema).toBe('WebhookEventType');
    }
  });

  it('declares Retry-After on every 429 and 503 answer', () => {
    const publish = operationNamed('publishEvents')!;
    expect(publish.responses['503'].headers?.['Retry-After']?.schema).toMatchObject({ type: 'integer' });
    for (const { name, operation } of operations) {
      expect(operation.responses['429']?.headers?.['Retry-After']?.schema, `${name}: 429 without Retry-After`).toMatchObject({
        type: 'integer',
      });
    }
  });

  it('types ids, counts, status codes and durations as integers', () => {
    const integers: Array<[string, string]> = [
      ['DeliveryDto', 'id'],
      ['DeliveryDto', 'attemptCount'],
      ['DeliveryDto', 'lastStatusCode'],
      ['AttemptDto', 'attemptNumber'],
      ['AttemptDto', 'durationMs'],
      ['AttemptDto', 'statusCode'],
      ['TestSendResultDto', 'statusCode'],
      ['TestSendResultDto', 'durationMs'],
      ['ErrorResponseDto', 'statusCode'],
    ];
    for (const [schema, property] of integers) {
      const declared = schemas[schema].properties![property].type;
      expect([declared].flat(), `${schema}.${property}`).toContain('integer');
    }
    expect(JSON.stringify(document)).not.toContain('"type":"number"');
  });

  it('gives webhookUrl format uri wherever it appears', () => {
    for (const schema of ['UpsertPreferenceDto', 'PreferenceDto', 'EffectivePreferenceDto']) {
      expect(schemas[schema].properties!.webhookUrl.format, schema).toBe('uri');
    }
  });

  it('has a server, so a generated client knows where the paths start', () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('gives an auto-disabled webhook a stable code a screen can translate, next to the human text', () => {
    for (const schema of ['PreferenceDto', 'EffectivePreferenceDto']) {
      const code = schemas[schema].properties!.disabledReasonCode;
      expect(code, schema).toBeDefined();
      expect(schemas[referenced(code)!].enum).toEqual(['CONSECUTIVE_FAILURES']);
      expect(schemas[schema].properties!.disabledReason).toBeDefined();
    }
  });

  it('says in the test-send operation that test sends are not stored and how they are counted', () => {
    expect(operationNamed('sendTestEvent')!.description).toMatch(/not stored.*webhook_test_sends_total/s);
  });
});
