import { Module } from '@nestjs/common';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { Clock, SystemClock } from './clock';

/** The one time source of the module: the `clock` option (tests) or the system clock. */
@Module({
  providers: [
    {
      provide: Clock,
      inject: [NOTIFICATIONS_OPTIONS],
      useFactory: (options: NotificationsModuleOptions) => options.clock ?? new SystemClock(),
    },
  ],
  exports: [Clock],
})
export class ClockModule {}
