/** An event's severity: a field of the webhook body, given by the publisher. */
export enum Severity {
  INFO = 'INFO',
  WARNING = 'WARNING',
  ERROR = 'ERROR',
}
