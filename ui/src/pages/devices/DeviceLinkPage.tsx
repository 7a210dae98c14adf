import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { linkDevice } from '../../api/devices';
import { errorText } from '../../api/client';
import { useT } from '../../lib/i18n';
import { Field, PageHeader } from '../../components/ui';
import { toast } from '../../stores/feedback';
import { paths } from '../../lib/paths';

export default function DeviceLinkPage() {
  const t = useT();
  const navigate = useNavigate();
  const [deviceId, setDeviceId] = useState('');
  const [code, setCode] = useState('');
  const [errors, setErrors] = useState<{ id?: string; code?: string }>({});
  const [serverError, setServerError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next = {
      id: deviceId.trim() ? undefined : t('device_id_invalid'),
      code: code.trim() ? undefined : t('field_required'),
    };
    setErrors(next);
    if (next.id || next.code) return;
    setBusy(true);
    setServerError(null);
    try {
      const device = await linkDevice(deviceId.trim(), code.trim());
      toast('success', t('device_linked'));
      navigate(paths.console.deviceDetails(device.id));
    } catch (err) {
      setServerError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="page narrow">
      <PageHeader title={t('link_device')} subtitle={t('no_devices_hint')} />
      <p className="muted">{t('link_agent_hint')}</p>
      <form className="card form-card" onSubmit={submit} noValidate>
        <Field label={t('device_id')} value={deviceId} onChange={(e) => setDeviceId(e.target.value)} error={errors.id} autoComplete="off" placeholder={t('device_id_placeholder')} />
        <Field label={t('pairing_code')} value={code} onChange={(e) => setCode(e.target.value)} error={errors.code} autoComplete="off" />
        {serverError ? (
          <p className="form-error" role="alert">
            {serverError}
          </p>
        ) : null}
        <button type="submit" className="button primary" disabled={busy}>
          {t('bind')}
        </button>
      </form>
    </div>
  );
}
