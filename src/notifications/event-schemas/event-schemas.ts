import type { EventType } from '../catalog/event-catalog';

/** A JSON Schema (2020-12) object, as parsed from JSON. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/**
 * The schema of one event type's `payload`, and its version.
 *
 * @publicApi
 */
export interface EventPayloadSchema {
  /**
   * A whole number from 1. Raise it when a field of the published schema is removed, retyped or made optional: the
   * module refuses to start with such a change under the version it already published.
   */
  readonly version: number;
  /**
   * JSON Schema 2020-12 of `payload`, `type: "object"` at the root. `$ref` may point at `#` or `#/$defs/<name>` only
   * (the OpenAPI document carries the schema as its own components); `format` is an annotation, not checked.
   */
  readonly schema: JsonSchema;
}

/**
 * The event catalog: per event type, the schema its `payload` must match. A type left out keeps a free `payload` object.
 *
 * @publicApi
 */
export type EventSchemas = { readonly [type in EventType]?: EventPayloadSchema };
