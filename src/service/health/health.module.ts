import { type DynamicModule, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { AcceptingTrafficIndicator } from './accepting-traffic.indicator';
import { HealthController } from './health.controller';
import { SHUTDOWN_READINESS_DELAY_MS, ShutdownState } from './shutdown-state.service';

/** `GET /health/live` and `GET /health/ready` of the standalone service (a host app has its own probes). */
@Module({})
export class HealthModule {
  /** `shutdownReadinessDelayMs`: how long a shutdown keeps the service working, with ready = 503, before it goes on. */
  static forRoot(shutdownReadinessDelayMs: number): DynamicModule {
    return {
      module: HealthModule,
      imports: [TerminusModule],
      controllers: [HealthController],
      providers: [{ provide: SHUTDOWN_READINESS_DELAY_MS, useValue: shutdownReadinessDelayMs }, ShutdownState, AcceptingTrafficIndicator],
    };
  }
}
