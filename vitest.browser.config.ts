import { defineConfig } from 'vitest/config';

/** Only the dashboard's browser tests (`npm run test:browser`); `npm test` runs them with everything else. */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 1, minForks: 1 } },
  },
});
