// ESLint runs only the type-aware rules Biome cannot check (it has no type information): promises that are
// dropped, passed where a callback's result is ignored, or awaited when they are not promises. Everything else
// (style, other lint rules) is Biome's job: `biome.jsonc`. One TypeScript program over tsconfig.check.json, so
// the run costs one type-check (about 25 s of CPU). No --cache: it is keyed by each file's own text, so a function
// that becomes async would not get its unchanged callers re-checked, which is the bug these rules are for.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig({
  files: ['packages/*/src/**/*.ts', 'examples/*/**/*.ts', 'templates/*/src/**/*.ts', 'tests/**/*.ts', 'bench/**/*.ts'],
  ignores: ['**/node_modules/**', '**/dist/**'],
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
  },
  plugins: { '@typescript-eslint': tseslint.plugin },
  linterOptions: { reportUnusedDisableDirectives: 'error' },
  rules: {
    '@typescript-eslint/no-floating-promises': 'error',
    '@typescript-eslint/no-misused-promises': 'error',
    '@typescript-eslint/await-thenable': 'error',
    '@typescript-eslint/only-throw-error': 'error',
  },
});
