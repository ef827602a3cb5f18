import { ScheduleModule } from '@nestjs/schedule';
import { inMemoryDatabase } from '../../support/in-memory-database';

/** What every host module below has next to NotificationsModule: its DataSource (SQLite in memory) and its scheduler. */
export const hostInfrastructure = () => [inMemoryDatabase(), ScheduleModule.forRoot()];
