// The words of the operator's pages that depend on a value: an audit action's name, a coin amount
// typed by the operator.
import { useCallback } from 'react';
import type { MessageKey } from '../../i18n';
import { parseCoins } from '../../lib/format';
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
};

/** The action's name in the reader's language (an action this UI does not know: as sent). */
export function actionLabel(t: OpsT, action: string): string {
  const key = ACTIONS[action];
  return key ? t(key) : action;
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
