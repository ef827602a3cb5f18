export { CidrList, describeNonGlobalAddress, parseCidrList } from './address-policy';
export {
  type HostResolver,
  MAX_WEBHOOK_URL_LENGTH,
  systemResolver,
  UnsafeWebhookUrlError,
  type UrlGuardOptions,
  WEBHOOK_BLOCKED_CODE,
  WebhookAddressBlockedError,
  WebhookUrlGuard,
} from './url-guard';
