import { defineConfig } from 'vitest/config';

/** `npm run test:load`: the load test only (long; not part of `npm test`). */
export default defineConfig({
  test: {
    include: ['test/load/**/*.load.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 180_000,
    pool: 'forks',
    poolOptions: { forks: { singleFork: true } },
  },
});
