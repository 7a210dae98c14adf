// What a company's administrators allocated to the signed-in member (the devices today; the apps
// issue adds the installations). Shown on the member's /app page: a member has no devices page.
import { fetchDevices } from '../api/devices';
import { formatDateTime } from '../lib/format';
import { useT } from '../lib/i18n';
import { useAsync } from '../lib/useAsync';
import { useSession } from '../stores/session';
import { StatusBadge, deviceTypeLabel, gpuText } from './deviceStatus';
import { AsyncItems, Section } from './sections';

export function AllocatedToMe() {
  const t = useT();
  const userType = useSession((s) => s.userType);
  const smeId = useSession((s) => s.smeId);
  // In a member's company context the devices call answers the devices allocated to them.
  const member = userType === 'member';
  const state = useAsync(member ? (signal) => fetchDevices({}, signal) : null, [smeId, member]);
  if (!member) return null;
  return (
    <Section className="card" id="allocated-title" title={t('allocated_to_me')}>
      <p className="muted">{t('allocated_to_me_hint')}</p>
      <AsyncItems state={state} emptyIcon="devices" emptyTitle={t('allocated_none')}>
        {(items) => (
            <div className="table-wrap">
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">{t('name')}</th>
                    <th scope="col">{t('device_id')}</th>
                    <th scope="col">{t('type')}</th>
                    <th scope="col">{t('status')}</th>
                    <th scope="col">{t('gpus')}</th>
                    <th scope="col">{t('last_seen')}</th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((d) => (
                    <tr key={d.id} data-device-id={d.id}>
                      <td>{d.name || d.id}</td>
                      <td className="mono">{d.id}</td>
                      <td>{deviceTypeLabel(t, d.type)}</td>
                      <td>
                        <StatusBadge status={d.status} />
                      </td>
                      <td>{d.spec ? gpuText(t, d.spec.gpus) : '-'}</td>
                      <td>{formatDateTime(d.last_seen_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
        )}
      </AsyncItems>
    </Section>
  );
}
