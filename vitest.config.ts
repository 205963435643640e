import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'], environment: 'node', testTimeout: 30_000,
          setupFiles: ['test/support/treeSitterGrammars.ts'] } },
      // needs the public kernels in .external/ (scripts/external-kernels.sh: GitHub or local mirrors), so it is
      // not part of `npm test`, whose machines reach only the npm registry: `npm run test:public`
      { test: { name: 'public', include: ['test/public/**/*.test.ts'], environment: 'node', testTimeout: 60_000, hookTimeout: 300_000,
          setupFiles: ['test/support/treeSitterGrammars.ts'] } },
      { test: { name: 'webview', include: ['test/webview/**/*.test.ts'], environment: 'happy-dom' } },
      { test: { name: 'integration', include: ['test/integration/**/*.test.ts'], environment: 'node',
          testTimeout: 300_000, hookTimeout: 300_000, fileParallelism: false } },
      { test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], environment: 'node',
          testTimeout: 900_000, hookTimeout: 900_000, fileParallelism: false } },
    ],
  },
});
