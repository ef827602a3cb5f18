import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The encrypted signing secret of one webhook preference. */
@Entity({ name: 'webhook_signing_secrets' })
export class WebhookSigningSecret {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'preference_id', type: 'integer', unique: true })
  preferenceId: number;

  @Column({ name: 'key_id', type: 'varchar', length: 32 })
  keyId: string;

  @Column({ type: 'varchar', length: 512 })
  ciphertext: string;

  @CreateDateColumn({ name: 'created_at', type: 'datetime' })
  createdAt: Date;
}
