import { Body, Controller, Post, Req, UseGuards, ValidationPipe } from '@nestjs/common';
import { AuthGuard, type AuthenticatedRequest } from '../auth/auth.guard';
import { ExecuteLoanDto } from './execute-loan.dto';
import type { Loan } from './loan.entity';
import { LoansService } from './loans.service';

@Controller('loans')
@UseGuards(AuthGuard)
export class LoansController {
  constructor(private readonly loans: LoansService) {}

  @Post()
  execute(@Req() request: AuthenticatedRequest, @Body(new ValidationPipe({ whitelist: true })) input: ExecuteLoanDto): Promise<Loan> {
    return this.loans.executeLoan(request.userId, input);
  }
}
