// Lint: typescript-eslint's recommended type-checked rules, with floating promises an error (a dropped promise must say so with `void`).
// `npm run lint` runs `eslint .`: every source file of the repository but the examples, which CI lints with their own configs.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The library's folders under src/notifications/, lowest layer first, and delivery/'s rooms, the same way. */
const LAYERS = [
  ['catalog', 'clock', 'common'],
  ['auth', 'url-policy', 'secrets', 'event-schemas', 'migrations'],
  ['rate-limit'],
  ['settings-api'],
  ['preferences'],
  ['delivery'],
  ['webhook-health', 'metrics', 'retention', 'scheduler'],
  ['auto-disable'],
];
const DELIVERY_ROOMS = [
  ['http'],
  ['entities', 'trace-context', 'wire'],
  ['events', 'partitions'],
  ['engine'],
  ['publishing', 'delivery-log'],
];

/** Each folder's names at its layer or above, but its own. */
function notBelow(layers, name) {
  const layer = layers.findIndex((names) => names.includes(name));
  return layers
    .slice(layer)
    .flat()
    .filter((other) => other !== name);
}

function restrictedImports(files, rules) {
  const patterns = rules.map(([names, message]) => ({ regex: `^(\\.\\./)+(${names.join('|')})(/|$)`, message }));
  return { files, ignores: ['src/**/*.spec.ts'], rules: { 'no-restricted-imports': ['error', { patterns }] } };
}

function layeredImports() {
  const service = [['service'], 'The library does not know the standalone service (src/service/): hosts and the service import it.'];
  const upward = (names, where) => [
    names,
    `An import up or across the layers of ${where} (docs/architecture.md, "Dependencies point one way").`,
  ];
  return [
    restrictedImports(['src/index.ts', 'src/version.ts', 'src/testing/**/*.ts', 'src/notifications/*.ts'], [service]),
    ...LAYERS.flat()
      .filter((folder) => folder !== 'delivery')
      .map((folder) =>
        restrictedImports([`src/notifications/${folder}/**/*.ts`], [service, upward(notBelow(LAYERS, folder), 'src/notifications/')]),
      ),
    restrictedImports(['src/notifications/delivery/*.ts'], [service, upward(notBelow(LAYERS, 'delivery'), 'src/notifications/')]),
    ...DELIVERY_ROOMS.flat().map((room) =>
      restrictedImports(
        [`src/notifications/delivery/${room}/**/*.ts`],
        [service, upward(notBelow(LAYERS, 'delivery'), 'src/notifications/'), upward(notBelow(DELIVERY_ROOMS, room), 'delivery/')],
      ),
    ),
  ];
}

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'dist-bench/**',
      'dist-library/**',
      'node_modules/**',
      'coverage/**',
      'data/**',
      'src/generated/**',
      'examples/**',
      // Type-checked by .ci/check-package.sh against the installed tarball, under its own tsconfigs.
      '.ci/types-check/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The standalone service (src/service/: main.ts, app.module.ts, config/, database/, health/, logging/, metrics-endpoint/,
  // scripts/) uses the library only through its public entry, src/index.ts, as a host app would.
  {
    files: ['src/service/**/*.ts'],
    ignores: ['src/**/*.spec.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.{1,2}/(.*/)?(notifications|testing)(/|$)',
              message: 'The service imports the library from its public entry (src/index.ts), as hosts do: export what it needs there.',
            },
          ],
        },
      ],
    },
  },
  // The library's folders import one way, down the layers of docs/architecture.md ("Dependencies point one way"): a folder
  // imports only folders of a lower layer, never a higher one or one beside it; and nothing in the library imports the service.
  // Unit specs may reach across: they test a seam from either side.
  ...layeredImports(),
  // Plain JavaScript (the CI's package checks, this file) and the Vitest config: no type information.
  {
    files: ['**/*.cjs', '**/*.mjs', '**/*.mts'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { ...tseslint.configs.disableTypeChecked.languageOptions, globals: globals.node },
  },
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  // The bench loads the compiled service from dist/ at run time, by path.
  { files: ['bench/**/*.ts'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
);
