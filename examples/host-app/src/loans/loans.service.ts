import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { EventType, Severity, WebhookPublisher } from '@funding/notification-webhooks';
import type { DataSource, EntityManager } from 'typeorm';
import type { ExecuteLoanDto } from './execute-loan.dto';
import { Loan } from './loan.entity';

@Injectable()
export class LoansService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    // Provided by NotificationsModule, imported once in AppModule: no import of it here.
    private readonly webhooks: WebhookPublisher,
  ) {}

  /** Records the loan and its LOAN_EXECUTED notification in one transaction: both are stored, or neither. */
  executeLoan(userId: number, input: ExecuteLoanDto): Promise<Loan> {
    return this.dataSource.transaction((manager) => this.recordLoan(manager, userId, input));
  }

  /**
   * Inside the caller's transaction: saves the loan and publishes LOAN_EXECUTED (if the user enabled it) through the same
   * `manager`. The webhook is sent once the transaction commits; if it rolls back, nothing was stored and nothing is sent.
   */
  async recordLoan(manager: EntityManager, userId: number, input: ExecuteLoanDto): Promise<Loan> {
    const loans = manager.getRepository(Loan);
    const loan = await loans.save(loans.create({ userId, ...input }));
    await this.webhooks.publish(
      {
        userId,
        type: EventType.LOAN_EXECUTED,
        severity: Severity.INFO,
        title: 'Loan executed',
        body: `${loan.amount} ${loan.currency} lent at ${(loan.dailyRate * 100).toFixed(4)}%/day for ${loan.days} days`,
        payload: { loanId: loan.id, currency: loan.currency, amount: loan.amount, dailyRate: loan.dailyRate, days: loan.days },
      },
      { manager },
    );
    return loan;
  }
}
