import { describe, expect, it } from 'vitest';
import { onPhone, safeRedirect, signInFor } from '../src/lib/paths';
import { pcWebTarget } from '../src/pages/pcweb/PcWebPage';

const home = '/market';

describe('safeRedirect (issue 16, finding 10)', () => {
  it('follows same-site paths', () => {
    expect(safeRedirect('/devices', home)).toBe('/devices');
    expect(safeRedirect('/devices/details?id=ZB-1', home)).toBe('/devices/details?id=ZB-1');
  });
  it('refuses other sites and the sign-in pages themselves', () => {
    for (const bad of [null, undefined, '', 'devices', 'https://evil.example/', '//evil.example', '/auth', '/auth/signin', '/m/auth/signin', '/m/auth/signup?redirect=/app']) {
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
  it('a phone page goes to the phone sign-in and keeps its links on the phone (issue 41)', () => {
    expect(signInFor('/m/wallet', '/m/wallet')).toBe('/m/auth/signin?redirect=%2Fm%2Fwallet');
    expect(signInFor('/wallet', '/wallet')).toBe('/auth/signin?redirect=%2Fwallet');
    expect(onPhone('/app/details?id=i1')).toBe('/m/app/details?id=i1');
    expect(onPhone('/wallet/top-up#x')).toBe('/m/wallet#x');
    expect(onPhone('/devices/details?id=d1')).toBe('/devices/details?id=d1');
    expect(onPhone('/m/app')).toBe('/m/app');
  });
  it('pc-web never sends the desktop client elsewhere', () => {
    expect(pcWebTarget(new URLSearchParams({ redirect: '/\\evil.example' }))).toBe(home);
    expect(pcWebTarget(new URLSearchParams({ redirect: '/\t/evil.example', language: 'zh' }))).toBe(`${home}?language=zh`);
  });
});
