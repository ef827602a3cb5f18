import 'reflect-metadata';
import fc from 'fast-check';
import {
  Allow,
  IsDefined,
  IsInt,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  registerDecorator,
  validateSync,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { VALIDATOR_OPTIONS } from './validation.pipe';
import { passesValidation } from './validation-verdict';

class Leaf {
  @IsInt()
  @Max(9)
  n: unknown;
}

class Tree {
  @IsDefined()
  @IsString({ each: true })
  @MaxLength(3, { each: true })
  tags: unknown;

  @IsOptional()
  @IsInt({ validateIf: (tree: Tree) => tree.label !== 'any' })
  count?: unknown;

  @ValidateIf((tree: Tree) => tree.count === 1)
  @IsString()
  label?: unknown;

  @IsOptional()
  @ValidateNested({ each: true })
  leaves?: unknown;

  @Allow()
  note?: unknown;
}

function EventuallyTrue(): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'eventuallyTrue',
      target: target.constructor,
      propertyName: String(property),
      async: true,
      validator: { validate: async () => true },
    });
}

class Awaited {
  @EventuallyTrue()
  value: unknown;
}

const leaf = (n: unknown) => Object.assign(new Leaf(), { n });

function trees(): fc.Arbitrary<Tree> {
  const scalar = fc.oneof(fc.constantFrom(undefined, null, '', 'ab', 'abcd', 'any', 1, 10, 1.5, true), fc.integer(), fc.string());
  // Mostly near-valid values, so that a few hundred of the trees pass.
  const tags = fc.oneof(
    { arbitrary: fc.array(fc.constantFrom('', 'ab', 'abc'), { maxLength: 3 }), weight: 4 },
    {
      arbitrary: fc.oneof(
        scalar,
        fc.array(scalar, { maxLength: 3 }),
        fc.array(scalar).map((items) => new Set(items)),
      ),
      weight: 1,
    },
  );
  const leafLike = fc.oneof(
    { arbitrary: fc.integer({ min: 0, max: 9 }).map(leaf), weight: 4 },
    {
      arbitrary: fc.oneof(
        scalar.map(leaf),
        scalar,
        fc.constant({ n: 1 }),
        scalar.map((n) => [leaf(n)]),
      ),
      weight: 1,
    },
  );
  const leaves = fc.oneof(
    scalar,
    leafLike,
    fc.array(leafLike, { maxLength: 3 }),
    fc.array(leafLike).map((items) => new Map(items.entries())),
  );
  return fc
    .record({ tags, count: scalar, label: scalar, leaves, note: scalar, extra: scalar }, { requiredKeys: [] })
    .map((fields) => Object.assign(new Tree(), fields));
}

describe('passesValidation', () => {
  it('is true exactly when class-validator finds no error: each, optional, validateIf, defined, nested collections, whitelist', () => {
    let passing = 0;
    fc.assert(
      fc.property(trees(), (tree) => {
        const valid = validateSync(tree, VALIDATOR_OPTIONS).length === 0;
        expect(passesValidation(tree)).toBe(valid);
        if (valid) passing++;
      }),
      { numRuns: 5_000 },
    );
    expect(passing).toBeGreaterThan(100);
  });

  it('is false for an object of no validated class, and for a rule it cannot run synchronously', () => {
    expect(validateSync({ a: 1 }, VALIDATOR_OPTIONS)).not.toEqual([]);
    expect(passesValidation({ a: 1 })).toBe(false);
    expect(passesValidation(Object.assign(new Awaited(), { value: 1 }))).toBe(false);
  });
});
