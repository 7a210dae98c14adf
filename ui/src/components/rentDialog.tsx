// The market's Rent: pick another owner's rentable device (price per hour, how it fits the app),
// the hours, see the total the wallet will hold and what it has available, then rent.
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { fetchRentOptions, fetchWalletAvailable, rentApp } from '../api/apps';
import type { App } from '../api/types';
import { useAsync } from '../lib/useAsync';
import { useT } from '../lib/i18n';
import { formatCoins } from '../lib/format';
import { paths } from '../lib/paths';
import { errorText } from '../lib/http';
import { Dialog } from './Dialog';
import { ErrorNote, SkeletonLines } from './placeholders';
import { fitText } from './installDialog';

const MAX_HOURS = 720;

export function RentDialog({ app, open, onClose }: { app: App; open: boolean; onClose: () => void }) {
  const t = useT();
  const navigate = useNavigate();
  const options = useAsync(open ? (signal) => fetchRentOptions(app.id, signal) : null, [open, app.id]);
  const wallet = useAsync(open ? (signal) => fetchWalletAvailable(signal) : null, [open]);
  const [chosen, setChosen] = useState('');
  const [hours, setHours] = useState('1');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const list = options.data ?? [];
  const pick = list.find((f) => f.device_id === chosen) ?? list.find((f) => f.fits);
  const n = Number(hours);
  const hoursOk = Number.isInteger(n) && n >= 1 && n <= MAX_HOURS;
  const total = pick && hoursOk ? (pick.price_per_hour ?? 0) * n : 0;
  const available = wallet.data?.available;
  const short = available !== undefined && total > available;
  const coins = (c: number) => `${formatCoins(c)} ${t('coins')}`;
  const submit = async () => {
    if (!pick) return;
    setBusy(true);
    setError(null);
    try {
      const inst = await rentApp(app.id, pick.device_id, n);
      onClose();
      navigate(paths.console.appDetails(inst.id));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={open}
      title={t('rent_app_title', { name: app.name })}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button ghost" onClick={onClose}>
            {t('cancel')}
          </button>
          <button type="button" className="button primary" disabled={!pick || !hoursOk || short || busy} onClick={submit}>
            {t('rent')}
          </button>
        </>
      }
    >
      {options.error ? <ErrorNote text={options.error} onRetry={options.reload} /> : null}
      {options.loading ? (
        <SkeletonLines lines={3} />
      ) : !list.length && !options.error ? (
        <p className="muted">{t('rent_no_devices')}</p>
      ) : (
        <fieldset className="device-picker">
          <legend>{t('pick_rent_device')}</legend>
          {list.map((f) => (
            <label key={f.device_id} className={`device-choice ${f.fits ? '' : 'unfit'}`} data-device={f.device_id}>
              <input type="radio" name="rent-device" value={f.device_id} disabled={!f.fits} checked={pick?.device_id === f.device_id} onChange={() => setChosen(f.device_id)} />
              <span className="device-choice-name">
                {f.device_name} · {coins(f.price_per_hour ?? 0)} {t('per_hour')}
              </span>
              <span className={f.fits ? 'fit-ok' : 'fit-bad'}>{fitText(t, f)}</span>
            </label>
          ))}
        </fieldset>
      )}
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
          <dt>{t('wallet_available')}</dt>
          <dd>{available === undefined ? '-' : coins(available)}</dd>
        </div>
      </dl>
      {short ? <p className="form-error">{t('rent_short')}</p> : null}
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </Dialog>
  );
}
