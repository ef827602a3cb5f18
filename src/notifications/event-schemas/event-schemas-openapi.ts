import type { EventType } from '../catalog/event-catalog';
import type { EventSchemas, JsonSchema } from './event-schemas';
import { subschemas } from './schema-refs';

/** `LOAN_EARLY_REPAID` → `LoanEarlyRepaid`. */
export function pascalCase(type: EventType): string {
  return type
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}

/** The component names of one event type: its body (`LoanExecutedEvent`) and its payload (`LoanExecutedPayload`). */
export function eventComponentNames(type: EventType): { readonly event: string; readonly payload: string } {
  const name = pascalCase(type);
  return { event: `${name}Event`, payload: `${name}Payload` };
}

const SCHEMAS = '#/components/schemas/';

/**
 * A payload schema as OpenAPI components: the root as `<Type>Payload` (with `x-schema-version`), each `$defs` entry as
 * `<Type>Payload_<name>`, and every `$ref` pointed at them, so generators name the types and resolve nothing else.
 */
function payloadComponents(type: EventType, version: number, schema: JsonSchema): Record<string, JsonSchema> {
  const { payload } = eventComponentNames(type);
  const { $schema: _dialect, $defs, ...root } = structuredClone(schema) as Record<string, unknown>;
  const definitions = ($defs ?? {}) as Record<string, JsonSchema>;
  const components: Record<string, JsonSchema> = {
    [payload]: { ...root, 'x-schema-version': version },
    ...Object.fromEntries(Object.entries(definitions).map(([name, definition]) => [`${payload}_${name}`, definition])),
  };
  for (const component of Object.values(components)) {
    for (const { schema: node } of subschemas(component)) {
      const ref = node.$ref;
      if (typeof ref !== 'string') continue;
      (node as Record<string, unknown>).$ref =
        ref === '#' ? `${SCHEMAS}${payload}` : `${SCHEMAS}${payload}_${ref.slice('#/$defs/'.length)}`;
    }
  }
  return components;
}

/**
 * The OpenAPI component schemas of an event catalog, to add beside those of {@link webhookDocumentation}'s entries:
 * per event type with a schema, `<Type>Event` (the delivery body, `WebhookEventBodyDto` with this `type` and this
 * `payload`) and its payload's components.
 *
 * @publicApi
 */
export function eventSchemaComponents(eventSchemas: EventSchemas): Record<string, JsonSchema> {
  const entries = Object.entries(eventSchemas).filter(([, entry]) => entry !== undefined) as Array<
    [EventType, NonNullable<EventSchemas[EventType]>]
  >;
  return Object.fromEntries(
    entries.flatMap(([type, { version, schema }]) => {
      const names = eventComponentNames(type);
      const event: JsonSchema = {
        description: `The body of a ${type} delivery; its payload follows schema version ${version}.`,
        allOf: [{ $ref: `${SCHEMAS}WebhookEventBodyDto` }],
        type: 'object',
        required: ['type', 'payload'],
        properties: { type: { type: 'string', const: type }, payload: { $ref: `${SCHEMAS}${names.payload}` } },
      };
      return [[names.event, event], ...Object.entries(payloadComponents(type, version, schema))];
    }),
  );
}
