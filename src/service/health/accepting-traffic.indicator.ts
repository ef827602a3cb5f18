import { Injectable } from '@nestjs/common';
import { type HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { ShutdownState } from './shutdown-state.service';

/** Down once shutdown began, so load balancers stop routing here before the drain. */
@Injectable()
export class AcceptingTrafficIndicator {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly shutdown: ShutdownState,
  ) {}

  check<const Key extends string>(key: Key): HealthIndicatorResult<Key> {
    const indicator = this.indicators.check(key);
    return this.shutdown.isShuttingDown ? indicator.down({ reason: 'shutting down' }) : indicator.up();
  }
}
