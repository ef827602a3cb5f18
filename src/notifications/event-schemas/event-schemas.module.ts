import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ClockModule } from '../clock/clock.module';
import { EventSchemasService } from './event-schemas.service';
import { PublishedEventSchema } from './published-event-schema.entity';
import { PublishedEventSchemaRepository } from './published-event-schema.repository';

/** The event catalog's payload schemas: compiled, checked against the published versions, applied at publish. */
@Module({
  imports: [TypeOrmModule.forFeature([PublishedEventSchema]), ClockModule],
  providers: [EventSchemasService, PublishedEventSchemaRepository],
  exports: [EventSchemasService],
})
export class EventSchemasModule {}
