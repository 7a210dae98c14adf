// The device details page's SSH block (docs/connect.md): the box's own SSH through the market, for
// its owner (`GET /api/ebs/v2/devices/{id}/connect`). Nothing shows when there is no SSH door.
import { fetchDeviceConnect } from '../../api/connect';
import { useT } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { SshBlock } from '../../components/apps/connect';
import { Icon } from '../../components/Icon';

export function DeviceSsh({ id, status }: { id: string; status: string }) {
  const t = useT();
  // Loaded again when the device goes on or off line (the page polls the device).
  const state = useAsync((signal) => fetchDeviceConnect(id, signal), [id, status]);
  const c = state.data;
  if (!c || !c.ssh) return null;
  return (
    <section className="card device-connect">
      {c.device_online ? (
        <SshBlock ssh={c.ssh} title={t('device_ssh')} />
      ) : (
        <>
          <h2>{t('device_ssh')}</h2>
          <div className="connect-offline" role="status" data-testid="connect-offline">
            <Icon name="warning" size={18} />
            <strong>{t('connect_offline')}</strong>
          </div>
        </>
      )}
    </section>
  );
}
