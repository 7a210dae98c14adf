// Guards the fragile alias of react-dom/server to react-dom's legacy-only browser build (SSR.md).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
// @ts-expect-error build.mjs is plain JS
import { LEGACY_SERVER_BUILD } from '../build.mjs';

describe('server bundle inputs', () => {
  it('react-dom still ships the legacy browser server build with renderToString', () => {
    expect(existsSync(LEGACY_SERVER_BUILD)).toBe(true);
    const require = createRequire(import.meta.url);
    const mod = require(LEGACY_SERVER_BUILD);
    expect(typeof mod.renderToString).toBe('function');
    expect(typeof mod.renderToStaticMarkup).toBe('function');
  });
});
