import type { NotificationsModuleOptions } from '../../../notifications-options.interface';
import { positiveInteger } from '../../../common/values/positive-integer';

/** Default of `publishTimeoutMs` / `PUBLISH_TIMEOUT_MS`: the publish endpoint answers within a few seconds, whatever the database does. */
export const DEFAULT_PUBLISH_TIMEOUT_MS = 5_000;

export function publishTimeoutMs(options: NotificationsModuleOptions): number {
  return positiveInteger('publishTimeoutMs', options.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS);
}
