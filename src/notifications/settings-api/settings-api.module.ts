import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';

/** What a {@link SettingsController} needs from its module: who is calling, and how often they may call. */
@Module({ imports: [AuthModule, RateLimitModule], exports: [AuthModule, RateLimitModule] })
export class SettingsApiModule {}
