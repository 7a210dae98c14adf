// The devices a company's administrators allocated to the signed-in member (the apps assigned to
// them are the installations above it). Shown on the member's /app page: a member has no devices
// page.
import { fetchDevices } from '../../api/devices';
import { useT } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { useSession } from '../../stores/session';
import { DeviceTable } from '../../components/devices/DeviceTable';
import { AsyncItems, Section } from '../../components/sections';

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
        {(items) => <DeviceTable items={items} />}
      </AsyncItems>
    </Section>
  );
}
