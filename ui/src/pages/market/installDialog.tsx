// The market's Install: pick one of my devices (components/apps/devicePicker: how each fits the
// app), then install and go to the new installation's page. Also the Rent dialog's footer and start.
import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { fetchDeviceFit, installApp } from '../../api/apps';
import type { App, Installation } from '../../api/types';
import { DevicePicker } from '../../components/apps/devicePicker';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useAction } from '../../lib/useAction';
import { Dialog } from '../../components/Dialog';
import { ActionError } from '../../components/form';

/** Sends an install or a rent, then closes the dialog and follows the new installation. */
export function useStartInstallation(onClose: () => void) {
  const navigate = useNavigate();
  const starting = useAction();
  const start = (send: () => Promise<Installation>) =>
    starting.run(async () => {
      const inst = await send();
      onClose();
      navigate(paths.console.appDetails(inst.id));
    });
  return { busy: starting.busy, error: starting.error, start };
}

/**
 * The footer of the Install and Rent dialogs: Cancel, and the button that starts, disabled until
 * the choice is complete (`ready`) and while the request runs.
 */
export function StartFooter({ label, ready, busy, onCancel, onStart }: { label: string; ready: boolean; busy: boolean; onCancel: () => void; onStart: () => void }) {
  const t = useT();
  return (
    <>
      <button type="button" className="button ghost" onClick={onCancel}>
        {t('cancel')}
      </button>
      <button type="button" className="button primary" disabled={!ready || busy} onClick={onStart}>
        {label}
      </button>
    </>
  );
}

/** A company member's Install or Rent: not theirs to do (docs/product.md §6), said without asking the server. */
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
  const fits = useAsync(open ? (signal) => fetchDeviceFit(app.id, signal) : null, [open, app.id]);
  const [chosen, setChosen] = useState('');
  const starting = useStartInstallation(onClose);
  const pick = chosen || fits.data?.find((f) => f.fits)?.device_id || '';
  return (
    <Dialog
      open={open}
      title={t('install_app_title', { name: app.name })}
      onClose={onClose}
      footer={<StartFooter label={t('install')} ready={!!pick} busy={starting.busy} onCancel={onClose} onStart={() => starting.start(() => installApp(app.id, pick))} />}
    >
      <DevicePicker
        state={fits}
        empty={
          <>
            {t('install_no_devices')} <Link to={paths.console.link()}>{t('link_device')}</Link>
          </>
        }
        legend={t('pick_device')}
        name="device"
        picked={pick}
        onPick={setChosen}
        label={(f) => (
          <>
            {f.device_name} <span className="mono muted">{f.device_id}</span>
          </>
        )}
      />
      <ActionError action={starting} />
    </Dialog>
  );
}
