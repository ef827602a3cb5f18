import 'reflect-metadata';
import { plainToInstance, TransformationType } from 'class-transformer';
// @ts-expect-error: the package ships this module's types apart, in types/
import { defaultMetadataStorage as registry } from 'class-transformer/cjs/storage';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { PublishEventDto } from './publish-event.dto';

// WebhookPublisher builds its PublishEventDto with Object.assign instead of plainToInstance (whose deep copy of the
// payload VerbatimJson discards). That is the same instance only while the DTO has no class-transformer rule of its own.
const defaultMetadataStorage = registry as MetadataStorage;

describe('PublishEventDto without class-transformer', () => {
  it('has no class-transformer rule but the payload kept as given', () => {
    const properties = Object.keys(new PublishEventDto());
    const rules = properties.flatMap((property) => [
      ...defaultMetadataStorage
        .findTransformMetadatas(PublishEventDto, property, TransformationType.PLAIN_TO_CLASS)
        .map(() => `transform ${property}`),
      ...(defaultMetadataStorage.findTypeMetadata(PublishEventDto, property) ? [`type ${property}`] : []),
      ...(defaultMetadataStorage.findExposeMetadata(PublishEventDto, property) ? [`expose ${property}`] : []),
      ...(defaultMetadataStorage.findExcludeMetadata(PublishEventDto, property) ? [`exclude ${property}`] : []),
    ]);
    expect(rules).toEqual(['transform payload']);
  });

  it('is what plainToInstance makes of an accepted input', () => {
    const inputs = [
      { userId: 7, type: 'LOAN_EXECUTED', severity: 'INFO', title: 't', body: 'b' },
      {
        userId: 1,
        type: 'RATE_SPIKE',
        severity: 'WARNING',
        title: 'Rate',
        body: '',
        payload: JSON.parse('{"valueOf":1,"nested":{"toString":[1,{"a":null}]},"n":1.5}'),
        createdAt: '2026-11-22T12:00:00+02:00',
      },
    ];
    for (const input of inputs) {
      const assigned = Object.assign(new PublishEventDto(), input);
      expect(assigned).toBeInstanceOf(PublishEventDto);
      expect(assigned).toStrictEqual(plainToInstance(PublishEventDto, input));
      expect(assigned.payload).toBe(input.payload);
    }
  });
});
