// /operator: the operator's console. The market at a glance (people, boxes, GPUs in use, what runs,
// the coins, the fee income of the last 30 days, the last backup), then its pages.
import { backUpNow, fetchOverview } from '../../api/ops';
import { ActionError } from '../../components/form';
import { useAction } from '../../lib/useAction';
import { toast } from '../../stores/feedback';
import type { GpuOpsOverview } from '../../api/gpus';
import { ListLink } from '../../components/ListLink';
import { AsyncItems, PageHeader, Section } from '../../components/sections';
import { formatCoins, formatDateTime, formatNumber, formatSize } from '../../lib/format';
import { paths } from '../../lib/paths';
import { useAsync } from '../../lib/useAsync';
import { DailyChart } from '../../components/DailyChart';
import { Figure } from '../../components/Figure';
import { useOpsT, type OpsT } from './operatorText';

const PAGES = [
  ['operatorPeople', 'operator_people', 'operator_people_hint'],
  ['operatorApps', 'operator_apps', 'operator_apps_hint'],
  ['operatorCodes', 'operator_codes', 'operator_codes_hint'],
  ['operatorSettings', 'operator_settings', 'operator_settings_hint'],
  ['operatorAudit', 'operator_audit', 'operator_audit_hint'],
] as const;

export default function OperatorPage() {
  const t = useOpsT();
  // One overview in a list of one: AsyncItems gives the loading, error and retry states.
  const state = useAsync(async (signal) => ({ items: [await fetchOverview(signal)], total: 1 }), []);
  return (
    <div className="page operator-page">
      <PageHeader title={t('operator')} subtitle={t('operator_intro')} />
      <Section id="operator-overview-title" title={t('operator_overview')} className="operator-overview">
        <AsyncItems state={state} emptyIcon="history" emptyTitle={t('operator_overview')}>
          {(items) => <Overview o={items[0]} t={t} onBackedUp={(b) => state.setData(() => ({ items: [{ ...items[0], last_backup: b }], total: 1 }))} />}
        </AsyncItems>
      </Section>
      <ul className="card operator-links">
        {PAGES.map(([path, title, hint]) => (
          <li key={path}>
            <ListLink to={paths.console[path]()}>{t(title)}</ListLink>
            <p className="muted">{t(hint)}</p>
          </li>
        ))}
      </ul>
    </div>
  );
}

function Overview({ o, t, onBackedUp }: { o: GpuOpsOverview; t: OpsT; onBackedUp: (b: NonNullable<GpuOpsOverview['last_backup']>) => void }) {
  const backingUp = useAction();
  const coins = t('coins');
  const last30 = o.fee_income_30d.reduce((s, d) => s + d.amount, 0);
  const backup = o.last_backup;
  const gpus = o.gpus;
  const mean = gpus?.utilization;
  return (
    <>
      <dl className="wallet-figures">
        <Figure id="people" label={t('operator_stat_people')} value={formatNumber(o.users)} hint={t('operator_stat_people_new', { n: o.users_7d })} />
        <Figure id="boxes" label={t('operator_stat_boxes')} value={formatNumber(o.devices_online)} hint={t('operator_stat_boxes_of', { n: o.devices_total })} />
        {gpus ? (
          <>
            <Figure id="gpus-held" label={t('operator_stat_gpus')} value={formatNumber(gpus.held)} hint={t('operator_stat_gpus_of', { total: gpus.total, online: gpus.online })} />
            <Figure
              id="gpus-busy"
              label={t('operator_stat_gpus_busy')}
              value={formatNumber(gpus.busy)}
              hint={typeof mean === 'number' ? t('operator_stat_gpus_mean', { n: formatNumber(mean, 0) }) : t('operator_stat_gpus_none')}
            />
          </>
        ) : null}
        <Figure id="running" label={t('operator_stat_running')} value={formatNumber(o.installations_running)} hint={t('operator_stat_rentals', { n: o.rentals_running })} />
        <Figure id="coins" label={t('operator_stat_coins')} value={formatCoins(o.coins_in_circulation)} unit={coins} hint={t('operator_stat_held', { amount: formatCoins(o.held) })} />
        <Figure id="fee" label={t('operator_stat_fee')} value={formatCoins(o.fee_income)} unit={coins} hint={t('operator_stat_fee_30d', { amount: formatCoins(last30) })} />
      </dl>
      <h3 className="operator-chart-title">{t('operator_fee_chart')}</h3>
      <DailyChart days={o.fee_income_30d.map((d) => ({ day: d.day, income: d.amount, expense: 0 }))} incomeOnly={t('operator_stat_fee')} />
      <div className="row-actions operator-backup">
        <p className="muted" data-backup={backup ? backup.kind : 'none'}>
          {t('operator_last_backup')}:{' '}
          {backup
            ? `${formatDateTime(backup.at)} · ${t(backup.kind === 'manual' ? 'operator_backup_manual' : 'operator_backup_scheduled')} · ${t('operator_backup_of', { file: backup.file, size: formatSize(backup.size) })}`
            : t('operator_no_backup')}
        </p>
        <button
          type="button"
          className="button ghost small"
          disabled={backingUp.busy}
          onClick={() =>
            void backingUp.run(async () => {
              onBackedUp(await backUpNow());
              toast('success', t('operator_backed_up'));
            })
          }
        >
          {t('operator_back_up_now')}
        </button>
      </div>
      <ActionError action={backingUp} />
    </>
  );
}
