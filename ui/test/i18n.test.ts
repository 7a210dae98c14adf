import { describe, expect, it } from 'vitest';
import { en } from '../src/i18n/en';
import { zh } from '../src/i18n/zh';
import { langFromBrowser, translate } from '../src/i18n';

describe('i18n tables', () => {
  it('have the same keys, none empty', () => {
    const enKeys = Object.keys(en).sort();
    const zhKeys = Object.keys(zh).sort();
    expect(zhKeys.filter((k) => !(k in en))).toEqual([]);
    expect(enKeys.filter((k) => !(k in zh))).toEqual([]);
    for (const k of enKeys) {
      expect((en as Record<string, string>)[k].trim(), `en.${k}`).not.toBe('');
      expect((zh as Record<string, string>)[k].trim(), `zh.${k}`).not.toBe('');
    }
  });
  it('keep placeholders in both languages', () => {
    const ph = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort().join(',');
    for (const k of Object.keys(en) as (keyof typeof en)[]) {
      expect(ph(zh[k]), k).toBe(ph(en[k]));
    }
  });
  it('uses the SPEC.md texts word for word', () => {
    expect(en.email_required).toBe('Email Required');
    expect(en.email_invalid).toBe('Email Format Invalid');
    expect(en.email_too_long).toBe('Email Address is too long');
    expect(en.username_required).toBe('Username Required');
    expect(en.username_invalid).toBe('Username Format Invalid');
    expect(en.password_required).toBe('Password Required');
    expect(en.password_incorrect).toBe('Password Incorrect');
    expect(en.password_mismatch).toBe("Password doesn't match");
    expect(en.error_403).toBe('Sorry, you do not have access to this page');
    expect(en.error_404).toBe('Sorry, the page you visited does not exist');
    expect(en.error_500).toBe('Sorry, your network is missing');
    expect(en.request_timeout).toBe('Request timeout! Please try again later');
    expect(en.network_error).toBe('Network error! Please try again later');
    expect(en.explore_market).toBe('Explore Market');
  });
  it('fills placeholders and picks the browser language', () => {
    expect(translate('en', 'sign_in_title', { product: 'ZMarket' })).toBe('Sign in to ZMarket');
    expect(langFromBrowser('zh-CN')).toBe('zh');
    expect(langFromBrowser('en-US')).toBe('en');
    expect(langFromBrowser(undefined)).toBe('en');
  });
});
