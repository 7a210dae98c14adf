// The words of the operator's pages that depend on a value: an audit action's name, a coin amount
// typed by the operator.
import { useCallback } from 'react';
import type { MessageKey } from '../../i18n';
import { formatCoins, formatSize, parseCoins } from '../../lib/format';
import { useLang, useT } from '../../lib/i18n';
import { operatorEn, operatorZh, type OpsKey } from './messages';

export type OpsT = ReturnType<typeof useOpsT>;

const ACTIONS: Record<string, OpsKey> = {
  'operator.grant': 'operator_action_operator_grant',
  'operator.revoke': 'operator_action_operator_revoke',
  'user.suspend': 'operator_action_user_suspend',
  'user.unsuspend': 'operator_action_user_unsuspend',
  'user.grant': 'operator_action_user_grant',
  'app.create': 'operator_action_app_create',
  'app.update': 'operator_action_app_update',
  'app.icon': 'operator_action_app_icon',
  'app.image': 'operator_action_app_image',
  'settings.update': 'operator_action_settings_update',
  'codes.issue': 'operator_action_codes_issue',
  'backup.run': 'operator_action_backup_run',
};

/** The action's name in the reader's language (an action this UI does not know: as sent). */
export function actionLabel(t: OpsT, action: string): string {
  const key = ACTIONS[action];
  return key ? t(key) : action;
}

type Detail = Record<string, unknown> | null;
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const num = (v: unknown) => (typeof v === 'number' ? v : 0);
const len = (v: unknown) => (Array.isArray(v) ? v.length : num(v));
const show = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** An audit entry's detail as a sentence, amounts in coins (issue 44 item 9); an action this UI
 * does not know: its changed fields, else nothing. */
export function auditSentence(t: OpsT, action: string, detail: Detail): string {
  const d = obj(detail);
  const [before, after] = [obj(d.before), obj(d.after)];
  const coins = (cents: unknown) => formatCoins(num(cents));
  switch (action) {
    case 'user.grant':
      return [t('audit_grant', { coins: coins(d.amount), before: coins(before.balance), after: coins(after.balance) }), d.memo ? t('audit_memo', { memo: show(d.memo) }) : ''].filter(Boolean).join(' · ');
    case 'codes.issue':
      return t('audit_codes', { count: num(d.count), coins: coins(d.amount) });
    case 'user.suspend':
      return t('audit_suspend', { reason: show(after.reason), sessions: len(d.sessions_ended), rentals: len(d.rentals_ended), boxes: len(d.devices_withdrawn) });
    case 'user.unsuspend':
      return [t('audit_unsuspend'), d.reason ? t('audit_memo', { memo: show(d.reason) }) : ''].filter(Boolean).join(' · ');
    case 'operator.grant':
    case 'operator.revoke':
      return t('audit_operator', { email: show(d.email) });
    case 'app.create':
      return t('audit_published', { version: show(after.version) });
    case 'app.icon':
      return t('audit_icon');
    case 'backup.run':
      return t('operator_backup_of', { file: show(d.file), size: formatSize(num(d.size)) });
    case 'app.image': {
      const archive = obj(d.archive);
      return [t('audit_image', { image: show(after.image ?? (Array.isArray(archive.tags) ? archive.tags[0] : '')), size: formatSize(num(archive.size)) }), changed(t, before, after)].filter(Boolean).join(' · ');
    }
    default:
      return changed(t, before, after);
  }
}

/** "Changed version: 1.0 → 1.0+r1, image: a → b" (coins where the field holds cents). */
function changed(t: OpsT, before: Record<string, unknown>, after: Record<string, unknown>): string {
  const keys = Object.keys(after).filter((k) => k !== 'archive');
  if (!keys.length) return '';
  const value = (k: string, v: unknown) => (/price|bonus|amount|fee_cents|coins/.test(k) && typeof v === 'number' ? formatCoins(v) : show(v));
  return t('audit_changed', { fields: keys.map((k) => `${k}: ${value(k, before[k])} → ${value(k, after[k])}`).join(', ') });
}

/** Cents of a typed amount of coins that may be 0 ("0", "12.50"), or null. */
export function parseCoinsOrZero(typed: string): number | null {
  return /^\s*0+(?:[.,]0{1,2})?\s*$/.test(typed) ? 0 : parseCoins(typed);
}

/** Cents as a plain amount to type ("12.5" → "12.50", no grouping). */
export function formatCoinsPlain(cents: number): string {
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** `t` for the operator's pages: their own words (messages.ts), else the app's. */
export function useOpsT(): (key: OpsKey | MessageKey, params?: Record<string, string | number>) => string {
  const lang = useLang();
  const t = useT();
  return useCallback(
    (key, params) => {
      const own = (lang === 'zh' ? operatorZh : operatorEn) as Record<string, string>;
      if (!(key in own)) return t(key as MessageKey, params);
      // A count of one takes the `_one` form, as translate() does.
      let text = (params && String(params.count ?? params.n) === '1' && own[`${key}_one`]) || own[key];
      for (const name of Object.keys(params ?? {})) text = text.split(`{${name}}`).join(String(params![name]));
      return text;
    },
    [lang, t],
  );
}
