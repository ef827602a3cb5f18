import { plainToInstance, Transform } from 'class-transformer';
import { IsEnum, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, validateSync } from 'class-validator';

export enum NodeEnv {
  development = 'development',
  production = 'production',
  test = 'test',
}

export enum DbType {
  sqlite = 'sqlite',
  mysql = 'mysql',
}

/** The environment variables of the standalone service; `.env.example` documents each one. */
export class EnvironmentVariables {
  @IsEnum(NodeEnv)
  NODE_ENV: NodeEnv = NodeEnv.development;

  @Transform(({ value }) => Number(value))
  @IsInt()
  @Min(1)
  @Max(65535)
  PORT = 3000;

  @IsEnum(DbType)
  DB_TYPE: DbType = DbType.sqlite;

  @IsString()
  DB_PATH = './data/notifications.sqlite';

  @IsOptional()
  @Matches(/^mysql:\/\/.+/, { message: 'DATABASE_URL must be a mysql:// URL' })
  DATABASE_URL?: string;

  @IsOptional()
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters' })
  JWT_SECRET?: string;

  @IsOptional()
  @Matches(/^([A-Za-z0-9_-]{1,32}:)?[A-Za-z0-9+/=_-]{43,44}(,([A-Za-z0-9_-]{1,32}:)?[A-Za-z0-9+/=_-]{43,44})*$/, {
    message: 'SECRETS_ENCRYPTION_KEY must be "[id:]<32 bytes in base64>", comma-separated for several keys',
  })
  SECRETS_ENCRYPTION_KEY?: string;

  @IsOptional()
  @MinLength(32, { message: 'INTERNAL_API_TOKEN must be at least 32 characters' })
  INTERNAL_API_TOKEN?: string;

  @IsOptional()
  @IsString()
  WEBHOOK_ALLOWED_CIDRS?: string;

  @IsOptional()
  @IsString()
  WEBHOOK_EXTRA_CA_FILE?: string;

  @IsUrl({ protocols: ['https', 'http'], require_tld: false }, { message: 'SERVICE_SITE must be an http(s) URL' })
  SERVICE_SITE = 'https://funding.example.com';
}

/** Parses and validates the environment; throws one error naming every bad variable. */
export function validateEnvironment(env: NodeJS.ProcessEnv): EnvironmentVariables {
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const variables = plainToInstance(EnvironmentVariables, given, { exposeDefaultValues: true });
  const errors = validateSync(variables, { skipMissingProperties: false });
  const problems = errors.flatMap((error) => Object.values(error.constraints ?? {}));
  if (variables.DB_TYPE === DbType.mysql && !variables.DATABASE_URL) problems.push('DATABASE_URL is required when DB_TYPE=mysql');
  if (variables.NODE_ENV === NodeEnv.production) {
    if (!variables.JWT_SECRET) problems.push('JWT_SECRET is required when NODE_ENV=production');
    if (!variables.SECRETS_ENCRYPTION_KEY) problems.push('SECRETS_ENCRYPTION_KEY is required when NODE_ENV=production');
  }
  if (problems.length > 0) throw new Error(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return variables;
}
