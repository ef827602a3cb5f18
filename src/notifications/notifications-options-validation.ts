import { parseCidrList } from './url-policy/address-policy';
import type { NotificationsModuleOptions } from './notifications-options.interface';

/** The shortest `jwtSecret` and `internalApiToken` accepted: both are guessable below it. */
export const MIN_SECRET_LENGTH = 32;

/** The only value of `allowPrivateAddressesInProduction`: the host accepts that webhooks may reach internal addresses. */
export const PRIVATE_ADDRESSES_ACKNOWLEDGEMENT = 'i-understand-the-ssrf-risk';

/**
 * Whether the module runs in production: `options.production`, or else `NODE_ENV=production`, the convention Node
 * hosts already follow, so a host that forgets the option still gets production's checks.
 */
export function isProduction(options: Pick<NotificationsModuleOptions, 'production'>): boolean {
  return options.production ?? process.env.NODE_ENV === 'production';
}

/**
 * What is wrong with the module's options, one line each naming the option: the checks the standalone service makes of
 * its environment, made here so that they hold whoever configures the module (AppModule from the environment, or a host).
 */
export function notificationsOptionsProblems(options: NotificationsModuleOptions): string[] {
  const problems: string[] = [];
  const production = isProduction(options);
  if (options.jwtSecret !== undefined && options.jwtSecret.length < MIN_SECRET_LENGTH)
    problems.push(`jwtSecret must be at least ${MIN_SECRET_LENGTH} characters`);
  if (options.internalApiToken !== undefined && options.internalApiToken.length < MIN_SECRET_LENGTH)
    problems.push(`internalApiToken must be at least ${MIN_SECRET_LENGTH} characters`);
  let overlaps: string[] = [];
  try {
    overlaps = parseCidrList(options.allowedCidrs ?? []).nonGlobalOverlaps();
  } catch (error) {
    problems.push(`allowedCidrs must list IP ranges, not host names: ${(error as Error).message}`);
  }
  if (production && overlaps.length > 0 && options.allowPrivateAddressesInProduction !== PRIVATE_ADDRESSES_ACKNOWLEDGEMENT) {
    problems.push(
      `allowedCidrs lets webhooks reach non-public addresses (${overlaps.join('; ')}), which is refused in production (SSRF): ` +
        `remove them, or set allowPrivateAddressesInProduction: '${PRIVATE_ADDRESSES_ACKNOWLEDGEMENT}'`,
    );
  }
  if (
    options.allowPrivateAddressesInProduction !== undefined &&
    options.allowPrivateAddressesInProduction !== PRIVATE_ADDRESSES_ACKNOWLEDGEMENT
  )
    problems.push(`allowPrivateAddressesInProduction must be unset or exactly '${PRIVATE_ADDRESSES_ACKNOWLEDGEMENT}'`);
  // A key shared with other token kinds (password reset, e-mail links) would otherwise open the settings API.
  if (production && options.jwtSecret !== undefined) {
    if (!options.jwtIssuer) problems.push('jwtIssuer is required in production with jwtSecret (the iss claim user tokens must carry)');
    if (!options.jwtAudience) problems.push('jwtAudience is required in production with jwtSecret (the aud claim user tokens must carry)');
  }
  return problems;
}

/** The options as given, once {@link notificationsOptionsProblems} finds nothing; otherwise one error listing every problem. */
export function validatedNotificationsOptions(options: NotificationsModuleOptions): NotificationsModuleOptions {
  const problems = notificationsOptionsProblems(options);
  if (problems.length > 0) throw new Error(`Invalid NotificationsModule options:\n  - ${problems.join('\n  - ')}`);
  return options;
}
