// Lint: typescript-eslint's recommended type-checked rules, with floating promises an error (a dropped promise must say so with `void`).
// `npm run lint` runs `eslint .`: every source file of the repository but the examples, which CI lints with their own configs.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

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
  // The standalone service (src/ outside the library: main.ts, app.module.ts, config/, database/, health/, logging/,
  // metrics-endpoint/, scripts/) uses the library only through its public entry, src/index.ts, as a host app would.
  {
    files: ['src/**/*.ts'],
    ignores: ['src/notifications/**', 'src/testing/**', 'src/index.ts', 'src/generated/**', 'src/version.ts', 'src/**/*.spec.ts'],
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
