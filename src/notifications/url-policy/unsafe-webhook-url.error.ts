/** The message is a phrase meant to follow the field name ("must use the https scheme"); it never quotes the URL. */
export class UnsafeWebhookUrlError extends Error {
  override readonly name: string = 'UnsafeWebhookUrlError';
}

export const WEBHOOK_BLOCKED_CODE = 'EWEBHOOKBLOCKED';

/** Raised at connect time, shaped like a Node socket error so http clients surface it as the request error. */
export class WebhookAddressBlockedError extends UnsafeWebhookUrlError {
  override readonly name: string = 'WebhookAddressBlockedError';
  readonly code = WEBHOOK_BLOCKED_CODE;

  constructor(
    message: string,
    readonly hostname: string,
  ) {
    super(message);
  }
}
