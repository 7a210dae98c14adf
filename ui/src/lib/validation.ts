// Client-side checks of docs/product.md §5. Each returns the message key to show, or null when valid.
import {
  ALIAS_MAX_LENGTH,
  API_KEY_NAME_MAX_LENGTH,
  ALIAS_MIN_LENGTH,
  AVATAR_EXTENSIONS,
  AVATAR_MAX_BYTES,
  AVATAR_TYPES,
  COMPANY_NAME_MAX_LENGTH,
  COMPANY_NAME_MIN_LENGTH,
  EMAIL_MAX_LENGTH,
  MESSAGE_MAX_LENGTH,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  TAG_MAX_LENGTH,
  USERNAME_MAX_LENGTH,
  USERNAME_MIN_LENGTH,
} from '../constants';
import type { MessageKey } from '../i18n';

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function validateEmail(value: string): MessageKey | null {
  const v = value.trim();
  if (!v) return 'email_required';
  if (v.length > EMAIL_MAX_LENGTH) return 'email_too_long';
  if (!EMAIL_RE.test(v)) return 'email_invalid';
  return null;
}

/** Sign-up and new passwords: 8-15 characters with at least one letter and one digit. */
export function validateNewPassword(value: string): MessageKey | null {
  if (!value) return 'password_required';
  // The precise rule, as the server words it (not docs/product.md §5's "Password Incorrect", which is about a
  // wrong current password).
  if (value.length < PASSWORD_MIN_LENGTH || value.length > PASSWORD_MAX_LENGTH) return 'password_format_invalid';
  if (!/[A-Za-z]/.test(value) || !/\d/.test(value)) return 'password_format_invalid';
  return null;
}

/** Sign-in only checks presence: the server judges the password itself. */
export function validatePasswordPresent(value: string): MessageKey | null {
  return value ? null : 'password_required';
}

export function validateConfirm(password: string, confirm: string): MessageKey | null {
  if (!confirm) return 'password_required';
  return password === confirm ? null : 'password_mismatch';
}

function lengthBetween(v: string, min: number, max: number) {
  const n = [...v].length;
  return n >= min && n <= max;
}

export function validateUsername(value: string, required = true): MessageKey | null {
  const v = value.trim();
  if (!v) return required ? 'username_required' : null;
  return lengthBetween(v, USERNAME_MIN_LENGTH, USERNAME_MAX_LENGTH) ? null : 'username_invalid';
}

export function validateAlias(value: string): MessageKey | null {
  return lengthBetween(value.trim(), ALIAS_MIN_LENGTH, ALIAS_MAX_LENGTH) ? null : 'alias_invalid';
}

/** A friend tag: 1-30 characters after trimming (docs/social.md). */
export function validateTagName(value: string): MessageKey | null {
  return lengthBetween(value.trim(), 1, TAG_MAX_LENGTH) ? null : 'tag_name_invalid';
}

/** A message: not only blanks, at most 2000 characters as written (docs/api.md). */
export function validateMessage(value: string): MessageKey | null {
  if (!value.trim()) return 'message_required';
  return [...value].length <= MESSAGE_MAX_LENGTH ? null : 'message_too_long';
}

/** An API key's name: 1-64 characters after trimming, no control characters (docs/identity.md). */
export function validateApiKeyName(value: string): MessageKey | null {
  const v = value.trim();
  if (!v) return 'api_key_name_required';
  // eslint-disable-next-line no-control-regex
  return [...v].length <= API_KEY_NAME_MAX_LENGTH && !/[\u0000-\u001f\u007f-\u009f]/.test(v) ? null : 'api_key_name_invalid';
}

export function validateCompanyName(value: string): MessageKey | null {
  return lengthBetween(value.trim(), COMPANY_NAME_MIN_LENGTH, COMPANY_NAME_MAX_LENGTH) ? null : 'company_name_invalid';
}

export function validateAvatar(file: { size: number; type: string; name: string }): MessageKey | null {
  const ext = file.name.includes('.') ? file.name.split('.').pop()!.toLowerCase() : '';
  const typeOk = (AVATAR_TYPES as readonly string[]).includes(file.type.toLowerCase());
  const extOk = (AVATAR_EXTENSIONS as readonly string[]).includes(ext);
  if (!typeOk || !extOk) return 'avatar_bad_type';
  if (file.size > AVATAR_MAX_BYTES) return 'avatar_too_large';
  return null;
}
