import { useEffect, useState } from 'react';
import { useNavigate } from 'react-router';
import { fetchPendingDevice, linkDevice } from '../../api/devices';
import type { PendingDevice } from '../../api/types';
import { CopyLine } from '../../components/apps/connect';
import { Field } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { PageHeader } from '../../components/sections';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { poll } from '../../lib/timing';
import { useAction } from '../../lib/useAction';
import { toast } from '../../stores/feedback';

/** The pairing-code alphabet of src/devices/model.rs (no 0, 1, I, L, O). */
const ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';

/** A pairing code for this page's install line (`install.sh?code=`): the box registers with it. */
function newCode(): string {
  const out: string[] = [];
  const bytes = new Uint8Array(16);
  while (out.length < 8) {
    crypto.getRandomValues(bytes);
    // 248 = 8 × 31: bytes at or above it would favour the first letters; they are skipped.
    for (const b of bytes) if (b < 248 && out.length < 8) out.push(ALPHABET[b % ALPHABET.length]);
  }
  return out.join('');
}

/**
 * Bind a box: the one line that installs the agent (with a pairing code made here), then the box
 * as soon as it registers with that code, one press from bound; or its device ID and pairing code
 * typed by hand.
 */
export default function DeviceLinkPage() {
  const t = useT();
  const navigate = useNavigate();
  const [deviceId, setDeviceId] = useState('');
  const [code, setCode] = useState('');
  // Made after mount: the server's markup has no code, so it never differs from the client's.
  const [lineCode, setLineCode] = useState('');
  const [found, setFound] = useState<PendingDevice | null>(null);
  useEffect(() => setLineCode(newCode()), []);
  useEffect(() => {
    if (!lineCode || found) return;
    const stop = poll(async () => setFound(await fetchPendingDevice(lineCode)), 3000);
    return stop;
  }, [lineCode, found]);
  const done = (id: string) => {
    toast('success', t('device_linked'));
    navigate(paths.console.deviceDetails(id));
  };
  const bindFound = useAction();
  const bind = () =>
    bindFound.run(async () => {
      if (found) done((await linkDevice(found.device_id, lineCode)).id);
    });
  const form = useForm<'id' | 'code'>({
    validate: () => ({
      id: deviceId.trim() ? null : 'device_id_invalid',
      code: code.trim() ? null : 'field_required',
    }),
    action: async () => done((await linkDevice(deviceId.trim(), code.trim())).id),
  });
  const origin = typeof window === 'undefined' ? '' : window.location.origin;
  const line = lineCode ? `curl -fsSL '${origin}/install.sh?code=${lineCode}' | sudo sh` : '';
  return (
    <div className="page narrow">
      <PageHeader title={t('link_device')} subtitle={t('no_devices_hint')} />
      <section className="card form-card" data-install-line>
        <h2>{t('install_line_title')}</h2>
        <p className="muted">{t('install_line_hint')}</p>
        {line ? <CopyLine text={line} /> : null}
        {found ? (
          <p role="status" data-found={found.device_id}>
            {t('install_found', { name: found.name, id: found.device_id })}{' '}
            <button type="button" className="button primary" disabled={bindFound.busy} onClick={() => void bind()}>
              {t('bind')}
            </button>
          </p>
        ) : (
          <p className="muted" role="status">{t('install_waiting')}</p>
        )}
        {bindFound.error ? <p className="form-error" role="alert">{bindFound.error}</p> : null}
      </section>
      <p className="muted">{t('install_manual')}</p>
      <form className="card form-card" onSubmit={form.submit} noValidate>
        <Field label={t('device_id')} value={deviceId} onChange={(e) => setDeviceId(e.target.value)} error={form.error('id')} autoComplete="off" placeholder={t('device_id_placeholder')} />
        <Field label={t('pairing_code')} value={code} onChange={(e) => setCode(e.target.value)} error={form.error('code')} autoComplete="off" />
        <FormError form={form} />
        <SubmitButton form={form}>{t('bind')}</SubmitButton>
      </form>
    </div>
  );
}
