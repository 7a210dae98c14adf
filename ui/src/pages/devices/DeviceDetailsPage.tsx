import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { fetchDevice, unlinkDevice } from '../../api/devices';
import { errorText } from '../../api/client';
import { useAsync } from '../../app/data';
import { useT } from '../../app/i18n';
import { ConfirmDialog } from '../../components/Dialog';
import { EmptyState, ErrorNote, PageHeader, SkeletonLines } from '../../components/ui';
import { Icon } from '../../components/Icon';
import { describeResources, formatCoins, formatDateTime } from '../../format';
import { toast } from '../../stores/feedback';
import { paths } from '../../paths';
import { resourceWords } from '../market/shared';
import { gpuText, statusLabel } from '../nearby/shared';
import type { MessageKey } from '../../i18n';

const MODE_KEYS: Record<string, MessageKey> = { manual: 'mode_manual', autopilot: 'mode_autopilot', dedicated: 'mode_dedicated' };

export default function DeviceDetailsPage() {
  const t = useT();
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const id = params.get('id') ?? '';
  const state = useAsync(id ? (signal) => fetchDevice(id, signal) : null, [id]);
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  const d = state.data;
  const unlink = async () => {
    setBusy(true);
    try {
      await unlinkDevice(id);
      toast('success', t('device_unlinked'));
      navigate(paths.console.devices);
    } catch (err) {
      toast('error', errorText(err));
    } finally {
      setBusy(false);
      setConfirm(false);
    }
  };
  return (
    <div className="page">
      <Link to={paths.console.devices} className="back-link">
        <Icon name="chevronLeft" size={16} /> {t('back')}
      </Link>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
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
          <dl className="facts card">
            <div>
              <dt>{t('type')}</dt>
              <dd>{d.type}</dd>
            </div>
            <div>
              <dt>{t('status')}</dt>
              <dd>{statusLabel(t, d.status)}</dd>
            </div>
            <div>
              <dt>{t('sharing_mode')}</dt>
              <dd>{MODE_KEYS[d.sharing_mode] ? t(MODE_KEYS[d.sharing_mode]) : d.sharing_mode}</dd>
            </div>
            <div>
              <dt>{t('rentable')}</dt>
              <dd>{d.rentable ? t('rentable') : t('not_rentable')}</dd>
            </div>
            <div>
              <dt>{t('price')}</dt>
              <dd>
                {formatCoins(d.price_per_hour)} {t('coins')} {t('per_hour')}
              </dd>
            </div>
            <div>
              <dt>{t('specification')}</dt>
              <dd>{d.spec ? describeResources({ ...d.spec, gpus: d.spec.gpus }, resourceWords(t)) : '-'}</dd>
            </div>
            <div>
              <dt>{t('gpus')}</dt>
              <dd>{d.spec ? gpuText(t, d.spec.gpus) : '-'}</dd>
            </div>
            <div>
              <dt>{t('last_seen')}</dt>
              <dd>{formatDateTime(d.last_seen_at)}</dd>
            </div>
          </dl>
        </>
      )}
      <ConfirmDialog
        open={confirm}
        title={t('unlink')}
        text={t('unlink_confirm')}
        danger
        busy={busy}
        onConfirm={() => void unlink()}
        onClose={() => setConfirm(false)}
      />
    </div>
  );
}
