import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { epochMs } from '../common/database/epoch-ms.transformer';

/**
 * The Ed25519 key pair of one webhook preference (Standard Webhooks' `v1a` signatures): the private key sealed like the
 * signing secret (same key ring, bound to its row), the public key in clear (`whpk_…`), shown in the settings API.
 */
@Entity({ name: 'webhook_signing_keys' })
export class WebhookSigningKey {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'preference_id', type: 'integer', unique: true })
  preferenceId: number;

  @Column({ name: 'key_id', type: 'varchar', length: 32 })
  keyId: string;

  @Column({ type: 'varchar', length: 512 })
  ciphertext: string;

  @Column({ name: 'public_key', type: 'varchar', length: 64 })
  publicKey: string;

  /** A rotation's overlap: the pair before it also signs `webhook-signature` until `previousUntil` (epoch ms). */
  @Column({ name: 'previous_key_id', type: 'varchar', length: 32, nullable: true })
  previousKeyId: string | null;

  @Column({ name: 'previous_ciphertext', type: 'varchar', length: 512, nullable: true })
  previousCiphertext: string | null;

  @Column({ name: 'previous_public_key', type: 'varchar', length: 64, nullable: true })
  previousPublicKey: string | null;

  @Column({ name: 'previous_until', type: 'bigint', nullable: true, transformer: epochMs })
  previousUntil: number | null;
}

/** What signing needs of a stored key pair: the sealed private keys and the row they are bound to. */
export type StoredSigningKey = Pick<
  WebhookSigningKey,
  'preferenceId' | 'keyId' | 'ciphertext' | 'previousKeyId' | 'previousCiphertext' | 'previousUntil'
>;
