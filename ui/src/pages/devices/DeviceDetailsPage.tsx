import { useCallback, useEffect, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { fetchDevice, unlinkDevice, updateLocation, updateSharing } from '../../api/devices';
import { FormError, SubmitButton, useForm } from '../../components/form';
import type { Device } from '../../api/types';
import type { DeviceMetrics, GpuDevice } from '../../api/gpus';
import { useAsync } from '../../lib/useAsync';
import { useT, type TFunction } from '../../lib/i18n';
import { ConfirmDialog } from '../../components/Dialog';
import { DeviceApps } from './deviceApps';
import { EmptyState, ErrorNote, SkeletonLines } from '../../components/placeholders';
import { Field } from '../../components/fields';
import { PageHeader } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { formatCoins, formatDateTime, formatNumber, formatSize } from '../../lib/format';
import { toast, toastFailure } from '../../stores/feedback';
import { paths } from '../../lib/paths';
import { StatusBadge, deviceTypeLabel, gpuText } from '../../components/devices/deviceStatus';
import { useInterval } from '../../lib/timing';
import { DEVICE_REFRESH_MS, MODE_KEYS } from './deviceInfo';
import { DeviceSsh } from './DeviceSsh';
import { HostRentals } from './HostRentals';
import { DeviceGpus } from './DeviceGpus';
import { BytesChart, PercentChart, useDeviceMetrics } from '../../components/devices/GpuCharts';

export default function DeviceDetailsPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const state = useAsync<GpuDevice>(id ? (signal) => fetchDevice(id, signal) : null, [id]);
  const metrics = useDeviceMetrics(id || null);
  const { setData } = state;
  const refresh = useCallback(() => {
    if (id) fetchDevice(id).then((d) => setData(() => d)).catch(() => {});
  }, [id, setData]);
  useInterval(refresh, DEVICE_REFRESH_MS);
  const [confirm, setConfirm] = useState(false);
  const d = state.data;
  const changed = useCallback((x: GpuDevice) => setData(() => x), [setData]);
  const unlink = useForm({
    action: () =>
      toastFailure(async () => {
        await unlinkDevice(id);
        toast('success', t('device_unlinked'));
        navigate(paths.console.devices());
      }).finally(() => setConfirm(false)),
  });
  return (
    <div className="page">
      <Link to={paths.console.devices()} className="back-link">
        <Icon name="chevronLeft" size={16} /> {t('back')}
      </Link>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading && !d ? (
        <SkeletonLines lines={6} />
      ) : !d ? (
        !state.error ? <EmptyState icon="devices" title={t('device_not_found')} /> : null
      ) : (
        <>
          <PageHeader
            title={d.name || d.id}
            subtitle={`${t('device_id')}: ${d.id}`}
            actions={
              <button type="button" className="button danger" onClick={() => setConfirm(true)}>
                {t('unlink')}
              </button>
            }
          />
          <dl className="facts card" aria-label={t('specification')}>
            <div>
              <dt>{t('type')}</dt>
              <dd>{deviceTypeLabel(t, d.type)}</dd>
            </div>
            <div>
              <dt>{t('status')}</dt>
              <dd data-testid="device-status">
                <StatusBadge status={d.status} />
              </dd>
            </div>
            {d.status_reason ? (
              <div>
                <dt>{t('status_reason')}</dt>
                <dd>{d.status_reason}</dd>
              </div>
            ) : null}
            <div>
              <dt>{t('cpu_cores')}</dt>
              <dd data-testid="device-cpu-cores">{d.spec.cpu_cores}</dd>
            </div>
            <div>
              <dt>{t('memory')}</dt>
              <dd>{formatSize(d.spec.memory_bytes)}</dd>
            </div>
            <div>
              <dt>{t('disk')}</dt>
              <dd>{formatSize(d.spec.disk_bytes)}</dd>
            </div>
            <div>
              <dt>{t('gpus')}</dt>
              <dd>
                {gpuText(t, d.spec.gpus)}
                {d.spec.gpus.some((g) => g.passthrough) ? ` · ${t('passthrough')}` : ''}
                {d.spec.gpus.length && typeof d.gpus_free === 'number' ? ` · ${t('gpu_free_of', { free: d.gpus_free, total: d.spec.gpus.length })}` : ''}
              </dd>
            </div>
            <div>
              <dt>{t('last_seen')}</dt>
              <dd>{formatDateTime(d.last_seen_at)}</dd>
            </div>
          </dl>
          <div className="device-sections">
            <DeviceGpus device={d} metrics={metrics.data} onChanged={changed} />
            <Metrics t={t} device={d} series={metrics.data} />
            <DeviceSsh id={d.id} status={d.status} />
            <SharingForm t={t} device={d} onSaved={changed} />
            <LocationForm t={t} device={d} onSaved={changed} />
            {d.type === 'server group' ? <HostRentals hostId={d.id} /> : null}
            <section className="card device-apps">
              <h2>{t('installed_apps')}</h2>
              <DeviceApps deviceId={d.id} />
            </section>
          </div>
        </>
      )}
      <ConfirmDialog
        open={confirm}
        title={t('unlink')}
        text={t('unlink_confirm')}
        danger
        busy={unlink.busy}
        onConfirm={() => unlink.submit()}
        onClose={() => setConfirm(false)}
      />
    </div>
  );
}

function Meter({ label, value, total, text }: { label: string; value: number; total: number; text: string }) {
  const pct = total > 0 ? Math.min(100, Math.max(0, (value / total) * 100)) : 0;
  return (
    <div>
      <dt>{label}</dt>
      <dd>
        {text}
        <div className="meter" aria-hidden="true">
          <span style={{ width: `${pct}%` }} />
        </div>
      </dd>
    </div>
  );
}

/** The latest beat's figures, then the box's CPU and memory over the last hour. */
function Metrics({ t, device, series }: { t: TFunction; device: Device; series: DeviceMetrics | undefined }) {
  const m = device.metrics;
  return (
    <section className="card device-metrics">
      <h2>{t('live_metrics')}</h2>
      {m ? (
        <dl className="facts">
          <Meter label={t('cpu_usage')} value={m.cpu_percent} total={100} text={`${formatNumber(m.cpu_percent, 1)} %`} />
          <Meter
            label={t('memory_used')}
            value={m.memory_used_bytes}
            total={device.spec.memory_bytes}
            text={`${formatSize(m.memory_used_bytes)} / ${formatSize(device.spec.memory_bytes)}`}
          />
          <Meter
            label={t('disk_used')}
            value={m.disk_used_bytes}
            total={device.spec.disk_bytes}
            text={`${formatSize(m.disk_used_bytes)} / ${formatSize(device.spec.disk_bytes)}`}
          />
        </dl>
      ) : (
        <p className="muted">{t('no_metrics')}</p>
      )}
      {series && (series.cpu.length || series.memory.length) ? (
        <div className="gpu-charts">
          <PercentChart title={t('cpu_usage')} points={series.cpu} />
          <BytesChart title={t('memory_used')} points={series.memory} total={device.spec.memory_bytes} />
        </div>
      ) : null}
    </section>
  );
}

/** Coins typed with up to 2 decimals -> smallest units. */
function parseCoins(text: string): number | null {
  const v = text.trim();
  if (!/^\d+(\.\d{1,2})?$/.test(v)) return null;
  const [whole, frac = ''] = v.split('.');
  return Number(whole) * 100 + Number((frac + '00').slice(0, 2));
}

function SharingForm({ t, device, onSaved }: { t: TFunction; device: Device; onSaved: (d: Device) => void }) {
  const [mode, setMode] = useState(device.sharing_mode);
  const [rentable, setRentable] = useState(device.rentable);
  const [price, setPrice] = useState(formatCoins(device.price_per_hour).replace(/,/g, ''));
  useEffect(() => {
    setMode(device.sharing_mode);
    setRentable(device.rentable);
    setPrice(formatCoins(device.price_per_hour).replace(/,/g, ''));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [device.id]);
  const form = useForm<'price'>({
    validate: () => ({ price: parseCoins(price) === null ? 'price_invalid' : null }),
    action: async () => {
      const d = await updateSharing(device.id, { mode, rentable, price_per_hour: parseCoins(price)! });
      onSaved(d);
      toast('success', t('sharing_saved'));
    },
  });
  return (
    <section className="card">
      <h2>{t('sharing_settings')}</h2>
      <form onSubmit={form.submit} noValidate>
        <fieldset className="plain-fieldset">
          <legend className="field-label">{t('sharing_mode')}</legend>
          {(['manual', 'autopilot', 'dedicated'] as const).map((m) => (
            <label key={m} className="radio-row">
              <input
                type="radio"
                name="sharing-mode"
                value={m}
                checked={mode === m}
                onChange={() => {
                  setMode(m);
                  if (m === 'dedicated') setRentable(false);
                  if (m === 'autopilot') setRentable(true);
                }}
              />
              <span>{t(MODE_KEYS[m])}</span>
            </label>
          ))}
        </fieldset>
        <label className="checkbox-row">
          <input type="checkbox" checked={rentable} disabled={mode !== 'manual'} onChange={(e) => setRentable(e.target.checked)} />
          <span>{t('rentable')}</span>
        </label>
        <Field label={t('price_per_hour_coins')} inputMode="decimal" value={price} onChange={(e) => setPrice(e.target.value)} error={form.error('price')} />
        <p className="field-hint">{t('sharing_hint')}</p>
        <FormError form={form} />
        <SubmitButton form={form}>{t('save')}</SubmitButton>
      </form>
    </section>
  );
}

function LocationForm({ t, device, onSaved }: { t: TFunction; device: Device; onSaved: (d: Device) => void }) {
  const [lat, setLat] = useState(device.location ? String(device.location.lat) : '');
  const [lng, setLng] = useState(device.location ? String(device.location.lng) : '');
  /** The typed position, or null when it is not one. */
  const typed = () => {
    const a = Number(lat);
    const b = Number(lng);
    if (!lat.trim() || !lng.trim() || !Number.isFinite(a) || !Number.isFinite(b) || Math.abs(a) > 90 || Math.abs(b) > 180) return null;
    return { lat: a, lng: b };
  };
  const save = async (body: { lat: number | null; lng: number | null }) => {
    const d = await updateLocation(device.id, body);
    onSaved(d);
    if (body.lat === null) {
      setLat('');
      setLng('');
    }
    toast('success', t('location_saved'));
  };
  const form = useForm({
    validate: () => ({ form: typed() ? null : 'lat_lng_invalid' }),
    action: () => save(typed()!),
  });
  return (
    <section className="card">
      <h2>{t('location')}</h2>
      <form onSubmit={form.submit} noValidate>
        <div className="form-row">
          <Field label={t('latitude')} inputMode="decimal" value={lat} onChange={(e) => setLat(e.target.value)} />
          <Field label={t('longitude')} inputMode="decimal" value={lng} onChange={(e) => setLng(e.target.value)} />
        </div>
        <p className="field-hint">{device.location ? t('location_hint') : t('location_none')}</p>
        <FormError form={form} />
        <div className="button-row">
          <SubmitButton form={form}>{t('save')}</SubmitButton>
          {device.location ? (
            <button type="button" className="button ghost" disabled={form.busy} onClick={() => void form.run(() => save({ lat: null, lng: null }))}>
              {t('clear_location')}
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
