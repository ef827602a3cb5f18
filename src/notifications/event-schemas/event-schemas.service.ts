import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { Clock } from '../clock/clock';
import type { EventType } from '../catalog/event-catalog';
import { InvalidFieldsException } from '../common/api/api-errors';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import type { JsonSchema } from './event-schemas';
import { InvalidEventSchemaError, PayloadSchemas } from './payload-schemas';
import { PublishedEventSchemaRepository } from './published-event-schema.repository';
import { breakingChanges } from './schema-compatibility';

/**
 * The module's event catalog (`eventSchemas`): compiled when the module is built, so a bad schema stops the start; on
 * start, each registered version is checked against the one published before under that version and recorded; at
 * publish, each payload is checked against its type's schema.
 */
@Injectable()
export class EventSchemasService implements OnModuleInit {
  readonly schemas: PayloadSchemas;

  constructor(
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
    private readonly published: PublishedEventSchemaRepository,
    private readonly clock: Clock,
  ) {
    this.schemas = PayloadSchemas.compile(options.eventSchemas);
  }

  async onModuleInit(): Promise<void> {
    const refusals: string[] = [];
    for (const type of this.schemas.types) {
      const refusal = await this.publish(type, this.schemas.schemaOf(type)!);
      if (refusal) refusals.push(refusal);
    }
    // A type left out of the catalog would turn its published fields into a free object: receivers lose all of them.
    for (const { type, version } of await this.published.latestVersions()) {
      if (this.schemas.schemaOf(type as EventType)) continue;
      refusals.push(
        `Event schema of ${type}: version ${version} was published and the catalog has none: keep its schema, or publish ` +
          `version ${version + 1} (with "schema": {"type": "object"} for a free payload)`,
      );
    }
    if (refusals.length > 0) throw new InvalidEventSchemaError(refusals.join('\n'));
  }

  /** Throws a 400 (`InvalidFieldsException`) naming `<eventPath>.payload…` when a payload breaks its type's schema. */
  checkPayload(type: EventType, payload: unknown, eventPath: string): void {
    const problem = this.schemas.problem(type, payload ?? {}, eventPath === '' ? 'payload' : `${eventPath}.payload`);
    if (problem) throw new InvalidFieldsException([problem]);
  }

  /** Records a type's version on its first start; a refusal line when it breaks what this version published. */
  private async publish(type: EventType, { version, schema }: { version: number; schema: JsonSchema }): Promise<string | undefined> {
    const json = JSON.stringify(schema);
    const now = this.clock.now();
    let stored = await this.published.find(type, version);
    if (stored === null && (await this.published.insertFirst({ type, version, schema: json }, now))) return undefined;
    stored ??= await this.published.find(type, version);
    if (stored === null || stored === json) return undefined;
    const changes = breakingChanges(JSON.parse(stored) as JsonSchema, schema);
    if (changes.length > 0) {
      return (
        `Event schema of ${type} version ${version} breaks the schema published under that version (${changes.join('; ')}): ` +
        `keep those fields, or raise its version to publish the change`
      );
    }
    await this.published.replace({ type, version, schema: json }, now);
    return undefined;
  }
}
