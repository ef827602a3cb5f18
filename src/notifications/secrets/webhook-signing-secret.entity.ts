import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { epochMs } from '../common/database/epoch-ms.transformer';

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

  /**
   * A rotation's overlap: the secret before it, sealed like `ciphertext` (same key ring, same row binding), also signs
   * `webhook-signature` until `previousUntil` (epoch ms), so receivers switch without rejecting a delivery.
   */
  @Column({ name: 'previous_key_id', type: 'varchar', length: 32, nullable: true })
  previousKeyId: string | null;

  @Column({ name: 'previous_ciphertext', type: 'varchar', length: 512, nullable: true })
  previousCiphertext: string | null;

  @Column({ name: 'previous_until', type: 'bigint', nullable: true, transformer: epochMs })
  previousUntil: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime' })
  createdAt: Date;
}

/** What signing needs of a stored secret: the sealed secret (and the one before a rotation) and the row it is bound to. */
export type StoredSigningSecret = Pick<
  WebhookSigningSecret,
  'preferenceId' | 'keyId' | 'ciphertext' | 'previousKeyId' | 'previousCiphertext' | 'previousUntil'
>;
