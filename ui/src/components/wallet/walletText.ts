// Words of the wallet page that are made from figures: the runway, what an entry was, signed amounts.
import type { MessageKey } from '../../i18n';
import { formatCoins } from '../../lib/format';

type T = (key: MessageKey, params?: Record<string, string | number>) => string;

/** How long `secs` of runway is, in the largest two units: "2 d 3 h", "5 h 50 min", "12 min". */
export function runwayText(t: T, secs: number | null): string {
  if (secs === null) return t('wallet_runway_none');
  if (secs <= 0) return t('wallet_runway_empty');
  const minutes = Math.floor(secs / 60);
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  if (d > 0) return t('runway_days_hours', { d, h });
  if (h > 0) return t('runway_hours_minutes', { h, m });
  return t('runway_minutes', { m: Math.max(m, 1) });
}

const REFS: Record<string, MessageKey> = {
  grant: 'ref_grant',
  signup_bonus: 'ref_signup_bonus',
  top_up: 'ref_top_up',
  rental: 'ref_rental',
  order: 'ref_order',
  zcloud: 'ref_zcloud',
};

/** What a movement was about, from its `ref_type`; an unknown one is shown as it is. */
export function refLabel(t: T, refType: string): string {
  const key = REFS[refType];
  return key ? t(key) : refType;
}

/** A provider's income from a rental, order or Z-CLOUD machine: what was paid and the market's
 * fee of it ("0.10 paid, market fee 0.01"), the amount being the net; null for other entries. */
export function splitText(t: T, e: { gross?: number | null; fee?: number | null }): string | null {
  if (e.gross == null || e.fee == null) return null;
  return t('wallet_split', { gross: formatCoins(e.gross), fee: formatCoins(e.fee) });
}

/** "+12.50" for income, "-3.00" for an expense. */
export function signedCoins(cents: number): string {
  return cents > 0 ? `+${formatCoins(cents)}` : formatCoins(cents);
}
