// /app/aicompute: the AI compute and AI server installations with their endpoint, the GPUs each
// holds with their live use, and live status.
import { useCallback } from 'react';
import { Link } from 'react-router';
import { fetchAiCompute } from '../../api/apps';
import type { GpuAiCompute } from '../../api/gpus';
import { useAsync } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { ActionTable, AsyncItems, PageHeader } from '../../components/sections';
import { AppActions, AppStatusChip, usePollWhileBusy } from '../../components/apps/appStatus';
import { paths } from '../../lib/paths';
import { GpuLiveList, useLatestMetrics } from './gpuUse';

export default function AiComputePage() {
  const t = useT();
  const state = useAsync((signal) => fetchAiCompute(signal), []);
  const { setData } = state;
  const refresh = useCallback(() => {
    fetchAiCompute()
      .then((d) => setData(() => d))
      .catch(() => {});
  }, [setData]);
  usePollWhileBusy(state.data?.items ?? [], refresh);
  const items = state.data?.items ?? [];
  const live = useLatestMetrics(items.filter((i) => i.gpus.some((g) => g.uuid)).map((i) => i.device_id));
  const changed = () => refresh();
  return (
    <div className="page">
      <PageHeader title={t('ai_compute')} subtitle={t('ai_compute_subtitle')} />
      <AsyncItems state={state} emptyIcon="/app/aicompute" emptyTitle={t('ai_compute_empty')}>
        {(items: GpuAiCompute[]) => (
          <ActionTable columns={[t('name'), t('device'), t('status'), t('endpoint'), t('gpus')]} actionLabel={t('actions')}>
            {items.map((i) => (
              <tr key={i.id} data-installation={i.id}>
                <td>
                  <Link to={paths.console.appDetails(i.id)}>{i.app_name}</Link>
                </td>
                <td>
                  {i.device_name}
                  {i.device_status !== 'online' ? <span className="muted"> · {t('device_offline')}</span> : null}
                </td>
                <td>
                  <AppStatusChip status={i.status} />
                </td>
                <td className="mono">{i.endpoint ?? '-'}</td>
                <td>
                  <GpuLiveList gpus={i.gpus} metrics={live?.[i.device_id]} />
                </td>
                <td>
                  <AppActions inst={i} onChanged={changed} />
                </td>
              </tr>
            ))}
          </ActionTable>
        )}
      </AsyncItems>
    </div>
  );
}
