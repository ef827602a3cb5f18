import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef, ModulesContainer } from '@nestjs/core';
import { SchedulerRegistry } from '@nestjs/schedule';
import { NOTIFICATIONS_OPTIONS } from './notifications.module-definition';

/** Refuses to start on the two set-up mistakes that otherwise fail silently: a second import, or no scheduler. */
@Injectable()
export class NotificationsStartupCheck implements OnModuleInit {
  constructor(
    private readonly modules: ModulesContainer,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    const imports = [...this.modules.values()].filter((module) => module.providers.has(NOTIFICATIONS_OPTIONS)).length;
    if (imports > 1) {
      throw new Error(
        `NotificationsModule is imported ${imports} times (forRoot/forRootAsync). Import it once, in your root module: ` +
          'it is global, so your other modules inject WebhookPublisher, NotificationPreferences and its other exports without importing it again.',
      );
    }
    if (!this.has(SchedulerRegistry)) {
      throw new Error(
        'NotificationsModule needs the scheduler that retries failed deliveries: add ScheduleModule.forRoot() ' +
          "(from '@nestjs/schedule') to the imports of your root module, once.",
      );
    }
  }

  private has(token: unknown): boolean {
    try {
      this.moduleRef.get(token as never, { strict: false });
      return true;
    } catch {
      return false;
    }
  }
}
