import { describe, expect, it } from 'vitest';
import {
  validateApiKeyName,
  validateAvatar,
  validateCompanyName,
  validateConfirm,
  validateEmail,
  validateNewPassword,
  validatePasswordPresent,
  validateMessage,
  validateTagName,
  validateUsername,
} from '../src/lib/validation';

describe('SPEC.md §5 validation', () => {
  it('API key name: 1-64 characters after trimming, no control characters', () => {
    expect(validateApiKeyName('')).toBe('api_key_name_required');
    expect(validateApiKeyName('   ')).toBe('api_key_name_required');
    expect(validateApiKeyName('x'.repeat(65))).toBe('api_key_name_invalid');
    expect(validateApiKeyName('line\nbreak')).toBe('api_key_name_invalid');
    expect(validateApiKeyName('bell\u0007')).toBe('api_key_name_invalid');
    expect(validateApiKeyName(` ${'密'.repeat(64)} `)).toBeNull();
    expect(validateApiKeyName('deploy script')).toBeNull();
  });
  it('email', () => {
    expect(validateEmail('')).toBe('email_required');
    expect(validateEmail('  ')).toBe('email_required');
    expect(validateEmail('nope')).toBe('email_invalid');
    expect(validateEmail('a@b')).toBe('email_invalid');
    expect(validateEmail(`${'a'.repeat(250)}@b.co`)).toBe('email_too_long');
    expect(validateEmail('user@example.com')).toBeNull();
  });
  it('password: 8-15, a letter and a digit', () => {
    expect(validateNewPassword('')).toBe('password_required');
    expect(validateNewPassword('abc123')).toBe('password_format_invalid');
    expect(validateNewPassword('abcdefghi')).toBe('password_format_invalid');
    expect(validateNewPassword('123456789')).toBe('password_format_invalid');
    expect(validateNewPassword('abcdefgh12345678')).toBe('password_format_invalid');
    expect(validateNewPassword('abcd1234')).toBeNull();
    expect(validateNewPassword('abcdefgh1234567')).toBeNull();
    expect(validatePasswordPresent('')).toBe('password_required');
  });
  it('confirmation', () => {
    expect(validateConfirm('abcd1234', 'abcd1235')).toBe('password_mismatch');
    expect(validateConfirm('abcd1234', 'abcd1234')).toBeNull();
  });
  it('username and company name 3-50', () => {
    expect(validateUsername('')).toBe('username_required');
    expect(validateUsername('', false)).toBeNull();
    expect(validateUsername('ab')).toBe('username_invalid');
    expect(validateUsername('a'.repeat(51))).toBe('username_invalid');
    expect(validateUsername('张三丰')).toBeNull();
    expect(validateCompanyName('ab')).toBe('company_name_invalid');
    expect(validateCompanyName('Acme')).toBeNull();
  });
  it('avatar ≤ 3 MB and an allowed image type', () => {
    expect(validateAvatar({ name: 'a.png', type: 'image/png', size: 3 * 1024 * 1024 })).toBeNull();
    expect(validateAvatar({ name: 'a.png', type: 'image/png', size: 3 * 1024 * 1024 + 1 })).toBe('avatar_too_large');
    expect(validateAvatar({ name: 'a.svg', type: 'image/svg+xml', size: 10 })).toBe('avatar_bad_type');
    expect(validateAvatar({ name: 'a.JPEG', type: 'image/jpeg', size: 10 })).toBeNull();
    expect(validateAvatar({ name: 'a.gif', type: 'image/gif', size: 10 })).toBeNull();
    expect(validateAvatar({ name: 'a.webp', type: 'image/webp', size: 10 })).toBeNull();
  });
});

describe('social checks', () => {
  it('tag names are 1-30 characters after trimming', () => {
    expect(validateTagName('  ')).toBe('tag_name_invalid');
    expect(validateTagName(' work ')).toBeNull();
    expect(validateTagName('界'.repeat(30))).toBeNull();
    expect(validateTagName('界'.repeat(31))).toBe('tag_name_invalid');
  });
  it('messages are not only blanks and at most 2000 characters as written', () => {
    expect(validateMessage(' \n ')).toBe('message_required');
    expect(validateMessage('好'.repeat(2000))).toBeNull();
    expect(validateMessage('a'.repeat(2001))).toBe('message_too_long');
  });
});
