// The market's Rent: pick an offer (another owner's rentable device: its GPUs (how many free, CUDA,
// verified), its price per hour, how it fits the app), the hours, see exactly what the wallet will hold and what is charged per
// hour, then rent. The price shown is sent with the rent: the server refuses (409) when the offer
// changed since, and nothing is held.
import { useState } from 'react';
import { Link } from 'react-router';
import { fetchRentOptions, rentApp } from '../../api/apps';
import { fetchWallet } from '../../api/wallet';
import type { App } from '../../api/types';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { formatCoins } from '../../lib/format';
import { paths } from '../../lib/paths';
import { PERSONAL_SME_ID } from '../../constants';
import { useSession } from '../../stores/session';
import { Dialog } from '../../components/Dialog';
import { ActionError } from '../../components/form';
import { DevicePicker, StartFooter, useStartInstallation } from './installDialog';
import { groupNames } from '../../components/devices/deviceStatus';

const MAX_HOURS = 720;

export function RentDialog({ app, open, onClose }: { app: App; open: boolean; onClose: () => void }) {
  const t = useT();
  const options = useAsync(open ? (signal) => fetchRentOptions(app.id, signal) : null, [open, app.id]);
  const wallet = useAsync(open ? (signal) => fetchWallet(signal) : null, [open]);
  const inCompany = useSession((st) => st.smeId) !== PERSONAL_SME_ID;
  const [chosen, setChosen] = useState('');
  const [hours, setHours] = useState('1');
  const starting = useStartInstallation(onClose);
  const list = options.data ?? [];
  const pick = list.find((f) => f.device_id === chosen) ?? list.find((f) => f.fits);
  const n = Number(hours);
  const hoursOk = Number.isInteger(n) && n >= 1 && n <= MAX_HOURS;
  const total = pick && hoursOk ? (pick.price_per_hour ?? 0) * n : 0;
  const available = wallet.data?.available;
  const short = available !== undefined && total > available;
  const coins = (c: number) => `${formatCoins(c)} ${t('coins')}`;
  const price = pick?.price_per_hour ?? 0;
  const submit = () => pick && starting.start(() => rentApp(app.id, pick.device_id, n, price));
  return (
    <Dialog
      open={open}
      title={t('rent_app_title', { name: app.name })}
      onClose={onClose}
      footer={<StartFooter label={t('rent')} ready={!!pick && hoursOk && !short} busy={starting.busy} onCancel={onClose} onStart={submit} />}
    >
      <DevicePicker
        state={options}
        empty={t('rent_no_devices')}
        legend={t('pick_rent_device')}
        name="rent-device"
        picked={pick?.device_id}
        onPick={setChosen}
        label={(f) => `${f.device_name} · ${f.gpus.length ? groupNames(f.gpus) : t('offer_no_gpu')} · ${coins(f.price_per_hour ?? 0)} ${t('per_hour')}`}
      />
      <div className="field">
        <label htmlFor="rent-hours">{t('rent_hours')}</label>
        <input id="rent-hours" type="number" min={1} max={MAX_HOURS} step={1} value={hours} onChange={(e) => setHours(e.target.value)} />
      </div>
      <dl className="facts">
        <div>
          <dt>{t('rent_total')}</dt>
          <dd data-testid="rent-total">{coins(total)}</dd>
        </div>
        <div>
          <dt>{t('rent_wallet_available')}</dt>
          <dd>{available === undefined ? '-' : coins(available)}</dd>
        </div>
      </dl>
      {pick && hoursOk ? (
        <p className="muted" data-testid="rent-charge">
          {t('rent_charge_note', { total: formatCoins(total), price: formatCoins(price), device: pick.device_name })}
        </p>
      ) : null}
      {short ? (
        <p className="form-error rent-short">
          {t('rent_short')}{' '}
          {/* A company pays from its own wallet, funded on the company page (its admins have no /wallet). */}
          <Link to={inCompany ? paths.console.company() : paths.console.topUp()} onClick={onClose}>
            {t(inCompany ? 'rent_fund_company' : 'rent_get_coins')}
          </Link>
        </p>
      ) : null}
      <ActionError action={starting} />
    </Dialog>
  );
}
