import { type CanActivate, Inject, Injectable, NotFoundException } from '@nestjs/common';
import { NOTIFICATIONS_OPTIONS } from '../../notifications.module-definition';
import type { NotificationsModuleOptions } from '../../notifications-options.interface';
import { processRole } from '../../process-role';

/** The settings and internal routes exist in `api` and `all` processes; a `worker` process answers 404 on them. */
@Injectable()
export class ApiRoleGuard implements CanActivate {
  constructor(@Inject(NOTIFICATIONS_OPTIONS) private readonly options: NotificationsModuleOptions) {}

  canActivate(): boolean {
    if (processRole(this.options) === 'worker')
      throw new NotFoundException('This process runs as a worker (role worker): it serves no API routes');
    return true;
  }
}
