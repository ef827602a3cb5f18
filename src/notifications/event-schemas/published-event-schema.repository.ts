import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { isUniqueViolation } from '../common/database/database-errors';
import { PublishedEventSchema } from './published-event-schema.entity';

/** One published version of an event type's payload schema. */
export interface PublishedVersion {
  readonly type: string;
  readonly version: number;
  readonly schema: string;
}

/** The published payload schemas (`webhook_event_schemas`), by event type and version. */
@Injectable()
export class PublishedEventSchemaRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The schema published under this type and version, as JSON; null when it never was. */
  async find(type: string, version: number): Promise<string | null> {
    const row = await this.dataSource.manager.findOneBy(PublishedEventSchema, { type, version });
    return row?.schema ?? null;
  }

  /** Every event type with a published schema, and its highest version. */
  async latestVersions(): Promise<Array<{ type: string; version: number }>> {
    const rows = await this.dataSource.manager
      .createQueryBuilder(PublishedEventSchema, 'schema')
      .select('schema.type', 'type')
      .addSelect('MAX(schema.version)', 'version')
      .groupBy('schema.type')
      .getRawMany<{ type: string; version: number | string }>();
    return rows.map((row) => ({ type: row.type, version: Number(row.version) }));
  }

  /** Records a first publish; false when another instance recorded this version first (read it and compare again). */
  async insertFirst({ type, version, schema }: PublishedVersion, now: number): Promise<boolean> {
    try {
      await this.dataSource.manager.insert(PublishedEventSchema, { type, version, schema, publishedAt: now, updatedAt: now });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /** Replaces a published version's schema with a compatible one (it adds fields, or describes them better). */
  async replace({ type, version, schema }: PublishedVersion, now: number): Promise<void> {
    await this.dataSource.manager.update(PublishedEventSchema, { type, version }, { schema, updatedAt: now });
  }
}
