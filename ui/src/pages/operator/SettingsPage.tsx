// /operator/settings: the market's settings kept in the database (config.toml gives the
// defaults): the fee (for rentals and orders started after the change), the sign-up bonus, the
// client download links, the low-balance notice, the top-up page's words and whether operators and
// company administrators must use two-factor sign-in. Every server applies
// a change within 10 seconds.
import { useState } from 'react';
import { fetchMarketSettings, saveMarketSettings } from '../../api/ops';
import type { MarketSettings } from '../../api/types';
import { Field, TextAreaField } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { AsyncItems, PageHeader, Section } from '../../components/sections';
import { useAsync } from '../../lib/useAsync';
import { toast } from '../../stores/feedback';
import { formatCoinsPlain, parseCoinsOrZero, useOpsT } from './operatorText';

type Key = 'fee' | 'bonus' | 'windows' | 'mac' | 'android' | 'hours' | 'howto' | 'howto_zh';

const SERVER_FIELDS: Partial<Record<string, Key>> = {
  market_fee_percent: 'fee',
  signup_bonus: 'bonus',
  'download_links.windows': 'windows',
  'download_links.mac': 'mac',
  'download_links.android': 'android',
  low_balance_hours: 'hours',
  how_to_get_coins: 'howto',
  how_to_get_coins_zh: 'howto_zh',
};

const whole = (typed: string): number | null => (/^\d{1,9}$/.test(typed.trim()) ? Number(typed.trim()) : null);

export default function SettingsPage() {
  const t = useOpsT();
  const state = useAsync(async (signal) => ({ items: [await fetchMarketSettings(signal)], total: 1 }), []);
  return (
    <div className="page narrow operator-settings">
      <PageHeader title={t('operator_settings')} subtitle={t('operator_settings_hint')} />
      <AsyncItems state={state} emptyIcon="settings" emptyTitle={t('operator_settings')}>
        {(items) => <SettingsForm initial={items[0]} />}
      </AsyncItems>
    </div>
  );
}

function SettingsForm({ initial }: { initial: MarketSettings }) {
  const t = useOpsT();
  const [v, setV] = useState({
    fee: String(initial.market_fee_percent),
    bonus: formatCoinsPlain(initial.signup_bonus),
    windows: initial.download_links.windows,
    mac: initial.download_links.mac,
    android: initial.download_links.android,
    hours: String(initial.low_balance_hours),
    howto: initial.how_to_get_coins,
    howto_zh: initial.how_to_get_coins_zh,
  });
  const [staff2fa, setStaff2fa] = useState(initial.two_factor_required_for_staff ?? false);
  const set = (k: Key) => (e: { target: { value: string } }) => setV((prev) => ({ ...prev, [k]: e.target.value }));
  const form = useForm<Key>({
    validate: () => ({
      fee: whole(v.fee) === null ? 'operator_number_invalid' : null,
      bonus: parseCoinsOrZero(v.bonus) === null ? 'operator_bonus_invalid' : null,
      hours: whole(v.hours) === null ? 'operator_number_invalid' : null,
    }),
    action: async () => {
      const saved = await saveMarketSettings({
        market_fee_percent: whole(v.fee),
        signup_bonus: parseCoinsOrZero(v.bonus),
        download_links: { windows: v.windows, mac: v.mac, android: v.android },
        low_balance_hours: whole(v.hours),
        how_to_get_coins: v.howto,
        how_to_get_coins_zh: v.howto_zh,
        two_factor_required_for_staff: staff2fa,
      });
      setV((prev) => ({ ...prev, windows: saved.download_links.windows, mac: saved.download_links.mac, android: saved.download_links.android }));
      toast('success', t('operator_saved_toast'));
    },
    serverFields: SERVER_FIELDS,
  });
  return (
    <form className="card form-card" onSubmit={form.submit} noValidate>
      <Field label={t('operator_fee')} name="market_fee_percent" inputMode="numeric" value={v.fee} onChange={set('fee')} error={form.error('fee')} hint={t('operator_fee_hint')} />
      <Field label={t('operator_bonus')} name="signup_bonus" inputMode="decimal" value={v.bonus} onChange={set('bonus')} error={form.error('bonus')} hint={t('operator_bonus_hint')} />
      <Field label={t('operator_low_hours')} name="low_balance_hours" inputMode="numeric" value={v.hours} onChange={set('hours')} error={form.error('hours')} hint={t('operator_low_hours_hint')} />
      <Section id="operator-links-title" title={t('operator_links')}>
        <Field label="Windows" name="windows" type="url" value={v.windows} onChange={set('windows')} error={form.error('windows')} hint={t('operator_link_hint')} />
        <Field label="macOS" name="mac" type="url" value={v.mac} onChange={set('mac')} error={form.error('mac')} hint={t('operator_link_hint')} />
        <Field label="Android" name="android" type="url" value={v.android} onChange={set('android')} error={form.error('android')} hint={t('operator_link_hint')} />
      </Section>
      <TextAreaField label={t('operator_howto')} name="how_to_get_coins" value={v.howto} maxLength={2000} onChange={set('howto')} error={form.error('howto')} hint={t('operator_howto_hint')} />
      <TextAreaField label={t('operator_howto_zh')} name="how_to_get_coins_zh" value={v.howto_zh} maxLength={2000} onChange={set('howto_zh')} error={form.error('howto_zh')} />
      <label className="checkbox-row">
        <input type="checkbox" name="two_factor_required_for_staff" checked={staff2fa} onChange={(e) => setStaff2fa(e.target.checked)} />
        <span>{t('operator_two_factor_staff')}</span>
      </label>
      <p className="field-hint">{t('operator_two_factor_staff_hint')}</p>
      <FormError form={form} />
      <div className="row-actions">
        <SubmitButton form={form}>{t('operator_save')}</SubmitButton>
      </div>
    </form>
  );
}
