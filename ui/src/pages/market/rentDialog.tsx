// The market's Rent: pick an offer (another owner's rentable device: its spec, GPUs (how many free,
// memory, CUDA, verified), reliability measured from its beats, distance, its price per hour, how it
// fits the app), sorted and filtered as the renter asks (pages/market/offers.ts), the hours, see
// exactly what the wallet will hold and what is charged per hour, then rent. The price shown is sent with the rent: the server refuses (409) when the offer
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
import { DevicePicker } from '../../components/apps/devicePicker';
import { StartFooter, useStartInstallation } from './installDialog';
import { groupNames } from '../../components/devices/deviceStatus';
import { useNearbyPoint } from '../../components/location';
import { NO_FILTERS, OFFER_SORTS, RELIABILITY_STEPS, filtering, offerFacts, offerQuery, type OfferFilters, type OfferSort } from './offers';

const MAX_HOURS = 720;

export function RentDialog({ app, open, onClose, preferred }: { app: App; open: boolean; onClose: () => void; preferred?: string }) {
  const t = useT();
  const { at } = useNearbyPoint();
  const [filters, setFilters] = useState<OfferFilters>(NO_FILTERS);
  const query = offerQuery(filters, at);
  const options = useAsync(open ? (signal) => fetchRentOptions(app.id, query, signal) : null, [open, app.id, JSON.stringify(query)]);
  const wallet = useAsync(open ? (signal) => fetchWallet(signal) : null, [open]);
  const inCompany = useSession((st) => st.smeId) !== PERSONAL_SME_ID;
  // `preferred`: the box the renter came from (the nearby details' Rent), picked when it fits.
  const [chosen, setChosen] = useState(preferred ?? '');
  const [hours, setHours] = useState('1');
  const starting = useStartInstallation(onClose);
  const list = options.data ?? [];
  const pick = list.find((f) => f.device_id === chosen && f.fits) ?? list.find((f) => f.fits);
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
      <OfferFilterBar filters={filters} onChange={setFilters} />
      <DevicePicker
        state={options}
        empty={filtering(filters) ? t('offer_none_match') : t('rent_no_devices')}
        legend={t('pick_rent_device')}
        name="rent-device"
        picked={pick?.device_id}
        onPick={setChosen}
        label={(f) => (
          <>
            {`${f.device_name} · ${f.gpus.length ? groupNames(f.gpus) : t('offer_no_gpu')} · ${coins(f.price_per_hour ?? 0)} ${t('per_hour')}`}
            <span className="device-choice-facts" data-testid="offer-facts">
              {offerFacts(t, f).join(' · ')}
            </span>
          </>
        )}
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

/** The offers' sort and filters: GPU model, memory, CUDA, uptime. */
function OfferFilterBar({ filters, onChange }: { filters: OfferFilters; onChange: (f: OfferFilters) => void }) {
  const t = useT();
  const set = (patch: Partial<OfferFilters>) => onChange({ ...filters, ...patch });
  return (
    <div className="offer-filters" data-testid="offer-filters">
      <div className="field">
        <label htmlFor="offer-sort">{t('offer_sort')}</label>
        <select id="offer-sort" value={filters.sort} onChange={(e) => set({ sort: e.target.value as OfferSort })}>
          {OFFER_SORTS.map((s) => (
            <option key={s} value={s}>
              {t(`offer_sort_${s}`)}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="offer-gpu">{t('offer_filter_gpu')}</label>
        <input id="offer-gpu" value={filters.gpuModel} placeholder={t('offer_filter_gpu_hint')} maxLength={64} onChange={(e) => set({ gpuModel: e.target.value })} />
      </div>
      <div className="field">
        <label htmlFor="offer-vram">{t('offer_filter_vram')}</label>
        <input id="offer-vram" type="number" min={0} step={1} value={filters.minVramGib} onChange={(e) => set({ minVramGib: e.target.value })} />
      </div>
      <div className="field">
        <label htmlFor="offer-cuda">{t('offer_filter_cuda')}</label>
        <input id="offer-cuda" value={filters.minCuda} placeholder="12.4" maxLength={8} onChange={(e) => set({ minCuda: e.target.value })} />
      </div>
      <div className="field">
        <label htmlFor="offer-reliability">{t('offer_filter_reliability')}</label>
        <select id="offer-reliability" value={filters.minReliability} onChange={(e) => set({ minReliability: e.target.value })}>
          <option value="">{t('offer_any')}</option>
          {RELIABILITY_STEPS.map((r) => (
            <option key={r} value={String(r)}>
              {`${Math.round(r * 100)}%`}
            </option>
          ))}
        </select>
      </div>
    </div>
  );
}
