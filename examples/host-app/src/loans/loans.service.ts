import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EventType, Severity, WebhookPublisher } from '@funding/notification-webhooks';
import type { Repository } from 'typeorm';
import type { ExecuteLoanDto } from './execute-loan.dto';
import { Loan } from './loan.entity';

@Injectable()
export class LoansService {
  constructor(
    @InjectRepository(Loan) private readonly loans: Repository<Loan>,
    // Provided by NotificationsModule, imported once in AppModule: no import of it here.
    private readonly webhooks: WebhookPublisher,
  ) {}

  /** Records the loan, then tells the user's webhook (if they enabled LOAN_EXECUTED). */
  async executeLoan(userId: number, input: ExecuteLoanDto): Promise<Loan> {
    const loan = await this.loans.save(this.loans.create({ userId, ...input }));
    await this.webhooks.publish({
      userId,
      type: EventType.LOAN_EXECUTED,
      severity: Severity.INFO,
      title: 'Loan executed',
      body: `${loan.amount} ${loan.currency} lent at ${(loan.dailyRate * 100).toFixed(4)}%/day for ${loan.days} days`,
      payload: { loanId: loan.id, currency: loan.currency, amount: loan.amount, dailyRate: loan.dailyRate, days: loan.days },
    });
    return loan;
  }
}
