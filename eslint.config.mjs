// `npm run lint` (zero warnings). typescript-eslint's flat config rather than Biome: the tree's disable
// comments already name its rules, and without type-aware rules it lints the hand-written tree in seconds.
// generated/ is the generator's output (kept in step by `npm run gen:check`), not linted.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'generated/**',
      'headers/**',
      'dist/**',
      'docs/api/**',
      'node_modules/**',
      'coverage/**',
      'bench/results/**',
      'bench/.build/**',
      'test/fixtures/**',
      'test/fuzz/fixture/**',
      '**/*.d.ts',
    ],
  },
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{js,cjs,mjs}'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        exports: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        __filename: 'readonly',
        Buffer: 'readonly',
        performance: 'readonly',
        global: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setImmediate: 'readonly',
        URL: 'readonly',
        globalThis: 'readonly',
        Deno: 'readonly',
        Bun: 'readonly',
      },
    },
  },
  {
    rules: {
      // cuda-ts loads what it needs on first use, through require(): importing it must load nothing else
      '@typescript-eslint/no-require-imports': 'off',
      // `_`-prefixed names are unused on purpose (a destructured field left out, a callback's position)
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // "probe, and fall back" reads as an empty catch; the fallback is the value set before the try
      'no-empty': ['error', { allowEmptyCatch: true }],
      'no-useless-assignment': 'off',
      // C strings end at NUL: patterns that match \x00 are deliberate
      'no-control-regex': 'off',
      // escaped brackets and slashes inside character classes keep the C-type and macro patterns readable
      'no-useless-escape': 'off',
      // walking up an owner chain starts at `this`; that is not aliasing it
      '@typescript-eslint/no-this-alias': 'off',
      // a `let` that a callback reads before the test assigns it cannot be a const
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['test/**', 'bench/**'],
    // a test or bench rethrows with the message it wants to show; the cause is the line above it
    rules: { 'preserve-caught-error': 'off' },
  },
);
