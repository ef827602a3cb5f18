import type { ArgumentsHost } from '@nestjs/common';
import { BadRequestException, Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { ApiExceptionFilter } from './api-exception.filter';
import { RetryLaterException } from './retry-later.exception';

function driverError(code: string | undefined, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code }, extra);
}

/** Runs the filter on `exception` and returns what it answered. */
function answer(exception: unknown) {
  const headers: Record<string, string> = {};
  const sent: { status?: number; body?: unknown } = {};
  const response = {
    setHeader: (name: string, value: string) => (headers[name.toLowerCase()] = value),
    status(status: number) {
      sent.status = status;
      return this;
    },
    json(body: unknown) {
      sent.body = body;
      return this;
    },
  };
  const host = {
    switchToHttp: () => ({
      getResponse: () => response,
      getRequest: () => ({ method: 'POST', path: '/api/v1/internal/notifications/events' }),
    }),
  };
  new ApiExceptionFilter().catch(exception, host as unknown as ArgumentsHost);
  return { ...sent, headers };
}

const UNAVAILABLE = { statusCode: 503, error: 'Service Unavailable', message: 'The database is unavailable; retry after 5 s' };

describe('ApiExceptionFilter and database errors', () => {
  beforeEach(() => {
    vi.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    vi.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => vi.restoreAllMocks());

  it.each([
    [
      'a refused connection inside a QueryFailedError',
      new QueryFailedError('SELECT 1', [], driverError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:3306')),
    ],
    ['a connect timeout from the pool', driverError('ETIMEDOUT', 'connect ETIMEDOUT', { fatal: true })],
    [
      'a lost connection',
      new QueryFailedError(
        'COMMIT',
        [],
        driverError('PROTOCOL_CONNECTION_LOST', 'Connection lost: The server closed the connection.', { fatal: true }),
      ),
    ],
    ['a query timeout', new QueryFailedError('SELECT 1', [], driverError('PROTOCOL_SEQUENCE_TIMEOUT', 'Query inactivity timeout'))],
    ['a closed pool', driverError(undefined, 'Pool is closed.')],
    ['a full pool queue', driverError(undefined, 'Queue limit reached.')],
    ['a busy SQLite', new QueryFailedError('INSERT …', [], driverError('SQLITE_BUSY', 'database is locked'))],
    ['a lock wait timeout', new QueryFailedError('UPDATE …', [], driverError('ER_LOCK_WAIT_TIMEOUT', 'Lock wait timeout exceeded'))],
  ])('answers %s with 503, Retry-After and the error shape, without the driver message', (_, error) => {
    const sent = answer(error);
    expect(sent.status).toBe(503);
    expect(sent.headers['retry-after']).toBe('5');
    expect(sent.body).toEqual(UNAVAILABLE);
    expect(Logger.prototype.warn).toHaveBeenCalledWith(
      expect.stringContaining('Database unavailable on POST /api/v1/internal/notifications/events'),
    );
  });

  it.each([
    ['an unexpected error', new Error('boom')],
    ['a unique violation', new QueryFailedError('INSERT …', [], driverError('ER_DUP_ENTRY', 'Duplicate entry'))],
    ['a syntax error', new QueryFailedError('SELEC 1', [], driverError('ER_PARSE_ERROR', 'You have an error in your SQL syntax'))],
  ])('still answers %s with a bare 500 and no Retry-After', (_, error) => {
    const sent = answer(error);
    expect(sent.status).toBe(500);
    expect(sent.headers['retry-after']).toBeUndefined();
    expect(sent.body).toEqual({ statusCode: 500, error: 'Internal Server Error', message: 'Internal server error' });
  });

  it('sets Retry-After from a RetryLaterException and leaves other HTTP errors as they were', () => {
    const later = answer(new RetryLaterException('not now', 7));
    expect(later).toMatchObject({
      status: 503,
      headers: { 'retry-after': '7' },
      body: { statusCode: 503, error: 'Service Unavailable', message: 'not now' },
    });
    const bad = answer(new BadRequestException('nope'));
    expect(bad).toMatchObject({ status: 400, headers: {}, body: { statusCode: 400, error: 'Bad Request', message: 'nope' } });
  });
});
