// The market's Install: pick one of my devices, each shown with how it fits the app (free
// capacity, what is short, or why it cannot take it), then install and go to /app.
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { fetchDeviceFit, installApp } from '../api/apps';
import type { App, DeviceFit } from '../api/types';
import { useAsync } from '../lib/useAsync';
import { useT, type TFunction } from '../lib/i18n';
import type { MessageKey } from '../i18n';
import { formatSize } from '../lib/format';
import { paths } from '../lib/paths';
import { errorText } from '../lib/http';
import { Dialog } from './Dialog';
import { ErrorNote, SkeletonLines } from './placeholders';

const REASONS: Record<string, MessageKey> = {
  offline: 'fit_offline',
  installed: 'fit_installed',
  no_gpu_for_lite_app: 'fit_no_gpu',
  sharing_mode: 'fit_sharing_mode',
};

function amount(field: string, v: number): string {
  return field.endsWith('_bytes') ? formatSize(v) : String(v);
}

const GAP_KEYS: Record<string, MessageKey> = {
  cpu_cores: 'gap_cpu',
  memory_bytes: 'gap_memory',
  disk_bytes: 'gap_disk',
  gpu_count: 'gap_gpu',
};

export function fitText(t: TFunction, f: DeviceFit): string {
  if (f.fits) {
    return t('fit_ok', { cpu: f.free.cpu_cores, memory: formatSize(f.free.memory_bytes), gpu: f.free.gpu_count });
  }
  if (f.reason === 'resources') {
    return f.gaps.map((g) => t(GAP_KEYS[g.field] ?? 'gap_cpu', { need: amount(g.field, g.need), have: amount(g.field, g.have) })).join(' · ');
  }
  return t(REASONS[f.reason ?? ''] ?? 'fit_offline');
}

/** A company member's Install or Rent: not theirs to do (SPEC §6), said without asking the server. */
export function NoPermissionDialog({ title, open, onClose }: { title: string; open: boolean; onClose: () => void }) {
  const t = useT();
  return (
    <Dialog
      open={open}
      title={title}
      onClose={onClose}
      footer={
        <button type="button" className="button ghost" onClick={onClose}>
          {t('close')}
        </button>
      }
    >
      <p className="form-error" role="alert">
        {t('no_permission_apps')}
      </p>
    </Dialog>
  );
}

export function InstallDialog({ app, open, onClose }: { app: App; open: boolean; onClose: () => void }) {
  const t = useT();
  const navigate = useNavigate();
  const fits = useAsync(open ? (signal) => fetchDeviceFit(app.id, signal) : null, [open, app.id]);
  const [chosen, setChosen] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const list = fits.data ?? [];
  const pick = chosen || list.find((f) => f.fits)?.device_id || '';
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      const inst = await installApp(app.id, pick);
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
      title={t('install_app_title', { name: app.name })}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button ghost" onClick={onClose}>
            {t('cancel')}
          </button>
          <button type="button" className="button primary" disabled={!pick || busy} onClick={submit}>
            {t('install')}
          </button>
        </>
      }
    >
      {fits.error ? <ErrorNote text={fits.error} onRetry={fits.reload} /> : null}
      {fits.loading ? (
        <SkeletonLines lines={3} />
      ) : !list.length && !fits.error ? (
        <p className="muted">{t('install_no_devices')}</p>
      ) : (
        <fieldset className="device-picker">
          <legend>{t('pick_device')}</legend>
          {list.map((f) => (
            <label key={f.device_id} className={`device-choice ${f.fits ? '' : 'unfit'}`} data-device={f.device_id}>
              <input type="radio" name="device" value={f.device_id} disabled={!f.fits} checked={pick === f.device_id} onChange={() => setChosen(f.device_id)} />
              <span className="device-choice-name">
                {f.device_name} <span className="mono muted">{f.device_id}</span>
              </span>
              <span className={f.fits ? 'fit-ok' : 'fit-bad'}>{fitText(t, f)}</span>
            </label>
          ))}
        </fieldset>
      )}
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </Dialog>
  );
}
