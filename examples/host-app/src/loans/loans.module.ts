import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { Loan } from './loan.entity';
import { LoansController } from './loans.controller';
import { LoansService } from './loans.service';

@Module({ imports: [TypeOrmModule.forFeature([Loan]), AuthModule], controllers: [LoansController], providers: [LoansService] })
export class LoansModule {}
