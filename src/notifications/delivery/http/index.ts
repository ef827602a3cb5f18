export type { AttemptOutcome, AttemptResult, WebhookRequest } from './attempt-result';
export {
  DEFAULT_CONNECTIONS_PER_ORIGIN,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  WebhookSender,
  type WebhookSenderOptions,
} from './webhook-sender';
