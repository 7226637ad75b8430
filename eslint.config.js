// Type-aware linting: the async mistakes a server dies of (floating promises, misused promises)
// and non-exhaustive switches are errors. The structure is enforced too: modules reach each other
// only through their index.ts, platform code never imports a module, and nothing but the entry
// points imports the composition root (deps.ts). Import cycles are found by dpdm (`npm run lint`
// runs both), which counts type-only imports as well.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const outsideTheDoor = {
  // `../<module>/<file>` from inside a module, unless the file is that module's index.ts.
  regex: '^\\.\\./[^./][^/]*/(?!index\\.js$)[^/]+$',
  message: 'Import another module through its index.ts (its door), not its internal files.',
};
const compositionRoot = {
  regex: '(^|/)deps\\.js$',
  message:
    'Only app.ts, main.ts, the command line and tests use deps.ts; give a module the services it needs as options.',
};
const moduleInternals = {
  // `…/modules/<module>/<file>` from outside the modules, unless the file is the module's index.ts.
  regex: '(^|/)modules/[^/]+/(?!index\\.js$)[^/]+$',
  message: 'Import a module through its index.ts (its door), not its internal files.',
};
const modulesFromPlatform = {
  regex: '(^|/)modules/',
  message: 'src/platform/ is infrastructure: it must not depend on a module.',
};

export default tseslint.config(
  // Generated files (npm run client:types) are checked by their tests, not linted.
  {
    ignores: ['node_modules/', 'data/', 'coverage/', 'dist/', '**/*.mjs', '**/*.generated.ts', 'web/dist/'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  {
    files: ['src/modules/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [outsideTheDoor, compositionRoot] }],
    },
  },
  {
    // Tests may read their own module's internals, but another module's only through its door.
    files: ['src/modules/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [outsideTheDoor] }] },
  },
  {
    // The entry points and start-up reach the modules through their doors too.
    files: ['src/*.ts', 'src/startup/**/*.ts', 'src/cli/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [moduleInternals] }] },
  },
  {
    files: ['src/platform/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [modulesFromPlatform, compositionRoot] }],
    },
  },
  {
    // Tests read untyped JSON bodies from the real server; `any` there is the honest type.
    files: ['test/**/*.ts', '**/*.test.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  { files: ['eslint.config.js'], extends: [tseslint.configs.disableTypeChecked] },
);
