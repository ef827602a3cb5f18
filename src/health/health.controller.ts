import { Controller, Get, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { AcceptingTrafficIndicator } from './accepting-traffic.indicator';
import { HealthCheckFailedFilter } from './health-check-failed.filter';

const DATABASE_PING_TIMEOUT_MS = 1000;

/** Probes for the orchestrator: live = the process answers; ready = it should get traffic. */
@ApiExcludeController()
@UseFilters(HealthCheckFailedFilter)
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly database: TypeOrmHealthIndicator,
    private readonly traffic: AcceptingTrafficIndicator,
  ) {}

  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => this.traffic.check('shutdown'),
      () => this.database.pingCheck('database').withTimeout(DATABASE_PING_TIMEOUT_MS),
    ]);
  }
}
