import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    environment: 'node',
    css: false,
    restoreMocks: true,
    setupFiles: ['test/setup.ts'],
  },
});
