import 'reflect-metadata';
import fc from 'fast-check';
import { TransformationType } from 'class-transformer';
// @ts-expect-error: the package ships this module's types apart, in types/
import { defaultMetadataStorage as registry } from 'class-transformer/cjs/storage';
import type { MetadataStorage } from 'class-transformer/types/MetadataStorage';
import { validateSync } from 'class-validator';
import { asDto } from '../../../common/api/raw-input';
import { createValidationPipe, validatedDto, VALIDATOR_OPTIONS } from '../../../common/api/validation.pipe';
import { passesValidation } from '../../../common/api/validation-verdict';
import { PublishEventDto, PublishEventsDto } from './publish-event.dto';

// The publisher and the internal endpoint check events with validatedDto instead of the validation pipe, whose
// class-transformer copy of every event costs a tenth of the endpoint's CPU. That is the same check only while the
// publish DTOs have no class-transformer rule but NestedDto and VerbatimJson.
const defaultMetadataStorage = registry as MetadataStorage;

function transformationRules(metatype: new () => object, properties: readonly string[]): string[] {
  return properties.flatMap((property) => [
    ...defaultMetadataStorage
      .findTransformMetadatas(metatype, property, TransformationType.PLAIN_TO_CLASS)
      .map(() => `transform ${property}`),
    ...(defaultMetadataStorage.findTypeMetadata(metatype, property) ? [`type ${property}`] : []),
    ...(defaultMetadataStorage.findExposeMetadata(metatype, property) ? [`expose ${property}`] : []),
    ...(defaultMetadataStorage.findExcludeMetadata(metatype, property) ? [`exclude ${property}`] : []),
  ]);
}

const VALID = {
  userId: 7,
  type: 'RATE_SPIKE',
  severity: 'INFO',
  title: 't',
  body: 'b',
  payload: JSON.parse('{"valueOf":1,"nested":{"toString":[1,{"a":null}]},"n":1.5}'),
  createdAt: '2026-11-22T12:00:00+02:00',
};

/** Events near the valid one: fields replaced by values of every JSON kind, dropped, or added. */
function bodies(): fc.Arbitrary<Record<string, unknown>> {
  const value = fc.oneof(
    fc.constantFrom(null, true, '', 'x'.repeat(201), 'RATE_SPIKE', 'LOUD', '2026-11-22T12:00:00Z', {}, [], [1, 'x'], { a: 1 }, VALID),
    fc.integer({ min: -5, max: 3e9 }),
    fc.double(),
    fc.string(),
  );
  const key = fc.constantFrom('userId', 'type', 'severity', 'title', 'body', 'payload', 'createdAt', 'valueOf', 'extra', '0');
  const event = fc.tuple(fc.dictionary(key, value, { maxKeys: 4 }), fc.array(key, { maxLength: 3 })).map(([replaced, dropped]) => {
    const input: Record<string, unknown> = { ...VALID, ...replaced };
    for (const field of dropped) delete input[field];
    return input;
  });
  const events = fc.oneof(fc.array(fc.oneof(event, value), { maxLength: 4 }), value, event);
  return fc.oneof(
    event,
    fc.tuple(events, fc.dictionary(key, value, { maxKeys: 1 })).map(([list, extra]) => ({ ...extra, events: list })),
  );
}

/** The outcome as a comparable value: the DTO with each object's class, or the 400's body. */
async function outcome(check: () => unknown): Promise<unknown> {
  const classes = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(classes)
      : value && typeof value === 'object'
        ? { class: value.constructor?.name, ...Object.fromEntries(Object.entries(value).map(([k, v]) => [k, classes(v)])) }
        : value;
  try {
    return classes(await check());
  } catch (error) {
    return (error as { getResponse(): unknown }).getResponse();
  }
}

describe('the publish DTOs without class-transformer', () => {
  it('have no class-transformer rule but the payload kept as given and the nested events', () => {
    expect(transformationRules(PublishEventDto, Object.keys(new PublishEventDto()))).toEqual(['transform payload']);
    expect(transformationRules(PublishEventsDto, ['events'])).toEqual(['type events']);
  });

  it('are checked by validatedDto as the validation pipe checks them: the same DTO or the same errors', async () => {
    const pipe = createValidationPipe();
    await fc.assert(
      fc.asyncProperty(bodies(), async (body) => {
        const metatype = 'events' in body ? PublishEventsDto : PublishEventDto;
        const piped = await outcome(() => pipe.transform(body, { type: 'body', metatype }));
        expect(await outcome(() => validatedDto<object>(metatype, body))).toEqual(piped);
      }),
      { numRuns: 2_000 },
    );
  });

  it("pass validatedDto's quick verdict exactly when class-validator finds no error", () => {
    let passing = 0;
    fc.assert(
      fc.property(bodies(), (body) => {
        const dto = asDto('events' in body ? PublishEventsDto : PublishEventDto, body) as object;
        const errors = validateSync(dto, VALIDATOR_OPTIONS);
        expect(passesValidation(dto)).toBe(errors.length === 0);
        if (errors.length === 0) passing++;
      }),
      { numRuns: 2_000 },
    );
    expect(passing).toBeGreaterThan(100);
  });

  it('keep the payload as published, not a copy', () => {
    const events = validatedDto(PublishEventsDto, { events: [VALID] }).events;
    expect(events[0]).toBeInstanceOf(PublishEventDto);
    expect(events[0].payload).toBe(VALID.payload);
  });

  it('answer 400 for a body that is not a JSON object, and name an event that is not one', async () => {
    expect(await outcome(() => validatedDto(PublishEventDto, [VALID]))).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'The body must be a JSON object',
    });
    expect(await outcome(() => validatedDto(PublishEventDto, null, 'events[3]'))).toEqual({
      message: 'events[3] must be a JSON object',
      errors: [{ field: 'events[3]', message: 'must be a JSON object' }],
    });
  });
});
