import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from './openapi-decorators';
import { ErrorResponseDto } from './error-response.dto';

const DESCRIPTIONS = {
  400: 'Invalid input: `errors[]` names each bad field (also malformed JSON and reserved keys such as `__proto__`).',
  401: 'Missing, invalid or expired bearer token.',
  404: "Not found (also for another user's ids, so ids do not leak).",
  413: 'Request body larger than the limit (1 MB by default).',
  415: 'Request body is not `application/json`.',
  429: 'Rate limit exceeded; `Retry-After` gives the seconds to wait.',
  500: 'Unexpected error; the body never holds internals, the server logs the details.',
} as const;

type DocumentedErrorStatus = keyof typeof DESCRIPTIONS;

/** Declares error responses in the one shape (ErrorResponseDto), each with its standard description. */
export function ApiErrorResponses(...statuses: DocumentedErrorStatus[]): MethodDecorator & ClassDecorator {
  return applyDecorators(...statuses.map((status) => ApiResponse({ status, type: ErrorResponseDto, description: DESCRIPTIONS[status] })));
}
