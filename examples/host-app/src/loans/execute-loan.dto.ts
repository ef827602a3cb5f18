import { IsIn, IsInt, IsNumber, IsPositive, Max } from 'class-validator';

export class ExecuteLoanDto {
  @IsIn(['USD', 'EUR', 'BTC'])
  currency: string;

  @IsNumber()
  @IsPositive()
  amount: number;

  @IsNumber()
  @IsPositive()
  dailyRate: number;

  @IsInt()
  @IsPositive()
  @Max(120)
  days: number;
}
