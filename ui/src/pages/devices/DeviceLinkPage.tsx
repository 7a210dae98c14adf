import { useState } from 'react';
import { useNavigate } from 'react-router';
import { linkDevice } from '../../api/devices';
import { Field } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { PageHeader } from '../../components/sections';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { toast } from '../../stores/feedback';

export default function DeviceLinkPage() {
  const t = useT();
  const navigate = useNavigate();
  const [deviceId, setDeviceId] = useState('');
  const [code, setCode] = useState('');
  // The command is code (never translated); the sentence around it is.
  const [hintBefore, hintAfter] = t('link_agent_hint', { command: '\u0000' }).split('\u0000');
  const form = useForm<'id' | 'code'>({
    validate: () => ({
      id: deviceId.trim() ? null : 'device_id_invalid',
      code: code.trim() ? null : 'field_required',
    }),
    action: async () => {
      const device = await linkDevice(deviceId.trim(), code.trim());
      toast('success', t('device_linked'));
      navigate(paths.console.deviceDetails(device.id));
    },
  });
  return (
    <div className="page narrow">
      <PageHeader title={t('link_device')} subtitle={t('no_devices_hint')} />
      <p className="muted">
        {hintBefore}
        <code>zmarket agent --server {typeof window === 'undefined' ? '' : window.location.origin}</code>
        {hintAfter}
      </p>
      <form className="card form-card" onSubmit={form.submit} noValidate>
        <Field label={t('device_id')} value={deviceId} onChange={(e) => setDeviceId(e.target.value)} error={form.error('id')} autoComplete="off" placeholder={t('device_id_placeholder')} />
        <Field label={t('pairing_code')} value={code} onChange={(e) => setCode(e.target.value)} error={form.error('code')} autoComplete="off" />
        <FormError form={form} />
        <SubmitButton form={form}>{t('bind')}</SubmitButton>
      </form>
    </div>
  );
}
