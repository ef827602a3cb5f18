import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from './openapi-decorators';
import { ErrorResponseDto } from './error-response.dto';

const DESCRIPTIONS = {
  400: 'Invalid input: `errors[]` names each bad field (also malformed JSON and reserved keys such as `__proto__`).',
  401: 'Missing, invalid or expired bearer token.',
  404: "Not found (also for another user's ids, so ids do not leak).",
  413: 'Request body larger than the limit (1 MB by default).',
  415: 'Request body is not `application/json`, or a request without a body lacks `Content-Type: application/json` (required on every state-changing request: cross-site request forgery).',
  429: 'Rate limit exceeded; `Retry-After` gives the seconds to wait.',
  500: 'Unexpected error; the body never holds internals, the server logs the details.',
} as const;

type DocumentedErrorStatus = keyof typeof DESCRIPTIONS;

/** The `Retry-After` header of 429 and 503 answers, so a client can wait exactly that long. */
export const RETRY_AFTER_HEADER = {
  'Retry-After': { description: 'Seconds to wait before sending the request again.', schema: { type: 'integer', minimum: 1 } },
} as const;

/** Declares error responses in the one shape (ErrorResponseDto), each with its standard description. */
export function ApiErrorResponses(...statuses: DocumentedErrorStatus[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({
        status,
        type: ErrorResponseDto,
        description: DESCRIPTIONS[status],
        ...(status === 429 ? { headers: RETRY_AFTER_HEADER } : {}),
      }),
    ),
  );
}
