import { Controller, Get, Logger, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  type HealthIndicatorResult,
  HealthIndicatorService,
  TypeOrmHealthIndicator,
} from '@nestjs/terminus';
import { AcceptingTrafficIndicator } from './accepting-traffic.indicator';
import { HealthCheckFailedFilter } from './health-check-failed.filter';

const DATABASE_PING_TIMEOUT_MS = 1000;

/** Probes for the orchestrator: live = the process answers; ready = it should get traffic. */
@ApiExcludeController()
@UseFilters(HealthCheckFailedFilter)
@Controller('health')
export class HealthController {
  private readonly logger = new Logger('Health');

  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly traffic: AcceptingTrafficIndicator,
    private readonly indicators: HealthIndicatorService,
  ) {}

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.traffic.check('shutdown'), () => this.databaseCheck()]);
  }

  // The probe is unauthenticated: the driver's error (internal addresses, the database user) goes to the log only.
  private async databaseCheck(): Promise<HealthIndicatorResult<'database'>> {
    const result = await this.database.pingCheck('database').withTimeout(DATABASE_PING_TIMEOUT_MS);
    if (result.database.status === 'up') return result;
    this.logger.warn(`Not ready: database ping failed: ${String(result.database.message ?? 'no detail')}`);
    return this.indicators.check('database').down({ message: 'database unavailable' });
  }
}
