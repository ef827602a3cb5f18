import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'loans' })
export class Loan {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'user_id', type: 'int' })
  userId: number;

  @Column({ type: 'varchar', length: 8 })
  currency: string;

  @Column({ type: 'double' })
  amount: number;

  @Column({ name: 'daily_rate', type: 'double' })
  dailyRate: number;

  @Column({ type: 'int' })
  days: number;

  @CreateDateColumn({ name: 'created_at' })
  createdAt: Date;
}
