import { ApiProperty, ApiPropertyOptional } from './openapi-decorators';

export class FieldErrorDto {
  @ApiProperty({ example: 'webhookUrl' })
  field: string;

  @ApiProperty({ example: 'must use the https scheme' })
  message: string;
}

/** The one error shape of every endpoint. */
export class ErrorResponseDto {
  @ApiProperty({ type: 'integer', example: 400, description: 'The HTTP status of the answer.' })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request' })
  error: string;

  @ApiProperty({ example: 'webhookUrl must use the https scheme', description: 'Human-readable summary.' })
  message: string;

  @ApiPropertyOptional({ type: [FieldErrorDto], description: 'Present on 400s caused by input fields.' })
  errors?: FieldErrorDto[];
}
