import { Injectable } from '@nestjs/common';
import type { EventType } from '../catalog/event-catalog';
import type { EffectivePreferenceDto, PreferenceDto, RotatedSecretResponseDto, UpsertPreferenceResponseDto } from './dto/preference.dto';
import type { UpsertPreferenceDto } from './dto/upsert-preference.dto';
import { PreferencesService } from './preferences.service';

/**
 * A user's notification preferences, for the host's own services: what the settings endpoints do, without HTTP. The
 * module's internal preferences service also hands decrypted signing secrets to delivery; this one never does.
 *
 * @publicApi
 */
@Injectable()
export class NotificationPreferences {
  readonly #preferences: PreferencesService;

  constructor(preferences: PreferencesService) {
    this.#preferences = preferences;
  }

  /** Saves one preference; the first enable of WEBHOOK for a type returns its signing secret, once (`webhookSecret`). */
  upsert(userId: number, input: UpsertPreferenceDto): Promise<UpsertPreferenceResponseDto> {
    return this.#preferences.upsert(userId, input);
  }

  /** The user's explicit preferences. */
  list(userId: number): Promise<PreferenceDto[]> {
    return this.#preferences.list(userId);
  }

  /** Defaults merged with the user's explicit preferences: one row per event type and allowed channel. */
  effective(userId: number): Promise<EffectivePreferenceDto[]> {
    return this.#preferences.effective(userId);
  }

  /**
   * Replaces the signing secret of the type's configured webhook and returns the new one, once; with `overlapHours`,
   * the old one also signs `webhook-signature` for that long.
   */
  rotateSecret(userId: number, type: EventType, options: { overlapHours?: number } = {}): Promise<RotatedSecretResponseDto> {
    return this.#preferences.rotateSecret(userId, type, options.overlapHours);
  }
}
