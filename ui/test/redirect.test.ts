import { describe, expect, it } from 'vitest';
import { safeRedirect } from '../src/lib/paths';
import { pcWebTarget } from '../src/pages/pcweb/PcWebPage';

const home = '/market';

describe('safeRedirect (issue 16, finding 10)', () => {
  it('follows same-site paths', () => {
    expect(safeRedirect('/devices', home)).toBe('/devices');
    expect(safeRedirect('/devices/details?id=ZB-1', home)).toBe('/devices/details?id=ZB-1');
  });
  it('refuses other sites and the sign-in pages themselves', () => {
    for (const bad of [null, undefined, '', 'devices', 'https://evil.example/', '//evil.example', '/auth', '/auth/signin']) {
      expect(safeRedirect(bad, home)).toBe(home);
    }
  });
  it('refuses backslashes, which browsers read as slashes', () => {
    for (const bad of ['/\\evil.example', '/\\/evil.example', '/a\\b', '\\\\evil.example']) {
      expect(safeRedirect(bad, home)).toBe(home);
    }
  });
  it('refuses control characters, which browsers drop from URLs', () => {
    for (const bad of ['/\t/evil.example', '/\n/evil.example', '/\r/x', '/a\u0000b', '/\u001f', '/\u007f']) {
      expect(safeRedirect(bad, home)).toBe(home);
    }
  });
  it('pc-web never sends the desktop client elsewhere', () => {
    expect(pcWebTarget(new URLSearchParams({ redirect: '/\\evil.example' }))).toBe(home);
    expect(pcWebTarget(new URLSearchParams({ redirect: '/\t/evil.example', language: 'zh' }))).toBe(`${home}?language=zh`);
  });
});
