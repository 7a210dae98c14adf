// /demands-and-offers: my demands (confirm, finish, cancel as the state allows), the orders I took,
// and the open demands with each of my devices: qualifies (Take) or what it lacks, in words.
// Polled while an order is on its way.
import { useCallback } from 'react';
import { Link } from 'react-router';
import { fetchBoard, fetchMyDeviceChecks, fetchOrders, orderAction, takeDemand } from '../../api/orders';
import type { ListPage, Order } from '../../api/types';
import { DemandTerms, GapList, OrderDeadline, OrderStatusChip } from './orders';
import { AsyncItems, PageHeader, Section } from '../../components/sections';
import { ConfirmDialog, useConfirm } from '../../components/Dialog';
import { Icon } from '../../components/Icon';
import { OpenAppButton } from '../../components/apps/connect';
import { SkeletonLines } from '../../components/placeholders';
import { formatCoins, formatDateTime } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useInterval } from '../../lib/timing';
import { useAction } from '../../lib/useAction';
import { useAsync } from '../../lib/useAsync';
import { toast, toastError } from '../../stores/feedback';
import { useLiveEvent } from '../../stores/live';
import type { MessageKey } from '../../i18n';

const ACTIONS: Record<string, 'confirm' | 'finish' | 'cancel'> = {
  order_pending: 'cancel',
  order_accepted: 'confirm',
  order_confirmed: 'finish',
};
const ACTION_LABEL: Record<string, MessageKey> = { cancel: 'cancel_order', confirm: 'confirm_order', finish: 'finish_order' };
const MOVING = new Set(['order_processing', 'order_accepted', 'order_confirmed']);

function OrderCard({ order, asDemander, onChanged }: { order: Order; asDemander: boolean; onChanged: (o: Order) => void }) {
  const t = useT();
  const acting = useAction({ onError: toastError });
  const o = order;
  const action = asDemander ? ACTIONS[o.status] : undefined;
  const run = () =>
    acting.run(async () => {
      if (!action) return;
      onChanged(await orderAction(o.id, action));
      if (action === 'confirm') toast('success', t('order_confirmed_toast'));
    });
  // Finishing stops the order for good: asked first (issue 26).
  const finish = useConfirm(run);
  const act = () => (action === 'finish' ? finish.ask(true) : run());
  return (
    <li className="app-row order-row" data-order={o.id} data-status={o.status}>
      <div className="app-row-main">
        <div className="app-row-title">
          <span>{o.name}</span>
          <OrderStatusChip status={o.cancelled ? 'order_cancelled' : o.status} />
        </div>
        <DemandTerms order={o} />
        {o.provider ? (
          <div className="muted small-text">{t('order_provider', { name: o.provider.name, device: o.device_name ?? o.device_id ?? '' })}</div>
        ) : null}
        {o.status_reason && !o.cancelled ? <div className={o.status === 'order_failed' ? 'app-reason' : 'muted small-text'}>{o.status_reason}</div> : null}
        <div className="muted small-text">
          {t('order_billed', { amount: formatCoins(o.billed) })}
          {o.deadline_at ? ' · ' : null}
          <OrderDeadline order={o} />
        </div>
        <details className="order-history">
          <summary>{t('order_history')}</summary>
          <ol>
            {o.history.map((h, i) => (
              <li key={i}>
                {formatDateTime(h.at)} · {o.cancelled && h.status === 'order_failed' ? t('order_cancelled') : t(h.status as MessageKey)}
                {h.reason && !(o.cancelled && h.status === 'order_failed') ? ` · ${h.reason}` : ''}
              </li>
            ))}
          </ol>
        </details>
      </div>
      <div className="page-actions">
        {asDemander && o.openable && o.installation_id ? <OpenAppButton id={o.installation_id} className="button ghost" /> : null}
        {action ? (
          <button type="button" className={action === 'cancel' ? 'button ghost' : 'button primary'} onClick={act} disabled={acting.busy}>
            {t(ACTION_LABEL[action])}
          </button>
        ) : null}
      </div>
      <ConfirmDialog {...finish.dialog} title={t('finish_confirm_title')} text={t('finish_confirm_text', { name: o.name })} confirmLabel={t('finish_order')} />
    </li>
  );
}

/** One open demand with each of my devices: qualifies (Take) or its gaps. */
function OpenDemand({ order, onTaken }: { order: Order; onTaken: () => void }) {
  const t = useT();
  const checks = useAsync((signal) => fetchMyDeviceChecks(order.id, signal), [order.id]);
  const taking = useAction({ onError: toastError });
  // Taking commits a device to the order: asked first, naming the device (issue 26).
  const take = useConfirm((c: { device_id: string; device_name: string }) =>
    taking.run(async () => {
      await takeDemand(order.id, c.device_id);
      toast('success', t('order_taken_toast'));
      onTaken();
    }),
  );
  return (
    <li className="app-row order-row" data-demand={order.id}>
      <div className="app-row-main">
        <div className="app-row-title">
          <span>{order.name}</span>
          <span className="muted small-text">{t('demand_by', { name: order.demander.name })}</span>
        </div>
        <DemandTerms order={order} />
        <OrderDeadline order={order} />
        <h3 className="small-heading">{t('your_devices')}</h3>
        {checks.loading ? (
          <SkeletonLines lines={1} />
        ) : checks.data?.length ? (
          <ul className="device-checks">
            {checks.data.map((c) => (
              <li key={c.device_id} data-device={c.device_id} data-ok={c.ok}>
                <strong>{c.device_name || c.device_id}</strong>
                {c.ok ? (
                  <>
                    <span className="app-status app-status-ok">{t('qualifies')}</span>
                    <button type="button" className="button primary small" disabled={taking.busy} onClick={() => take.ask({ device_id: c.device_id, device_name: c.device_name || c.device_id })}>
                      {t('take_order')}
                    </button>
                  </>
                ) : (
                  <GapList gaps={c.gaps} />
                )}
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted small-text">{t('no_devices_for_demand')}</p>
        )}
      </div>
      <ConfirmDialog
        {...take.dialog}
        danger={false}
        title={t('take_confirm_title')}
        text={t('take_confirm_text', { device: take.subject?.device_name ?? '', app: order.app_name, name: order.name, hours: order.hours })}
        confirmLabel={t('take_order')}
      />
    </li>
  );
}

export default function DemandsAndOffersPage() {
  const t = useT();
  const mine = useAsync((signal) => fetchOrders('demander', signal), []);
  const taken = useAsync((signal) => fetchOrders('provider', signal), []);
  const board = useAsync((signal) => fetchBoard(null, signal), []);
  const refresh = useCallback(() => {
    for (const [state, role] of [[mine, 'demander'], [taken, 'provider']] as const) {
      fetchOrders(role)
        .then((d) => state.setData(() => d))
        .catch(() => {});
    }
  }, [mine, taken]);
  const moving = [...(mine.data?.items ?? []), ...(taken.data?.items ?? [])].some((o) => MOVING.has(o.status));
  useInterval(() => {
    if (moving) refresh();
  }, 3000);
  // An order of mine moved (taken, running, finished): its notification arrives on the live
  // stream the messages use, and the lists follow at once (issue 44 item 6).
  useLiveEvent((e) => {
    if (e.kind === 'notification' && String((e.data as { kind?: string } | null)?.kind ?? '').startsWith('order_')) {
      refresh();
      board.reload();
    }
  });
  const replace = (next: Order) =>
    mine.setData((d: ListPage<Order> | undefined) => (d ? { ...d, items: d.items.map((o) => (o.id === next.id ? next : o)) } : d));
  const myIds = new Set((mine.data?.items ?? []).map((o) => o.id));
  const others = (board.data?.items ?? []).filter((o) => !myIds.has(o.id));
  const afterTake = () => {
    board.reload();
    taken.reload();
  };

  return (
    <div className="page">
      <PageHeader
        title={t('demands_and_offers')}
        subtitle={t('on_demand_text')}
        actions={
          <Link className="button primary" to={paths.onDemand.placeOrder()}>
            <Icon name="plus" size={16} /> {t('place_an_order')}
          </Link>
        }
      />
      <Section id="my-demands" className="order-section" title={t('my_demands')}>
        <AsyncItems state={mine} emptyIcon="demands" emptyTitle={t('no_my_demands')}>
          {(items) => (
            <ul className="app-list">
              {items.map((o) => (
                <OrderCard key={o.id} order={o} asDemander onChanged={replace} />
              ))}
            </ul>
          )}
        </AsyncItems>
      </Section>
      <Section id="orders-taken" className="order-section" title={t('orders_taken')}>
        <AsyncItems state={taken} emptyIcon="demands" emptyTitle={t('no_orders_taken')}>
          {(items) => (
            <ul className="app-list">
              {items.map((o) => (
                <OrderCard key={o.id} order={o} asDemander={false} onChanged={() => taken.reload()} />
              ))}
            </ul>
          )}
        </AsyncItems>
      </Section>
      <Section id="open-demands" className="order-section" title={t('board_title')}>
        {board.loading ? (
          <SkeletonLines />
        ) : others.length ? (
          <ul className="app-list">
            {others.map((o) => (
              <OpenDemand key={o.id} order={o} onTaken={afterTake} />
            ))}
          </ul>
        ) : (
          <p className="muted">{t('no_demands')}</p>
        )}
      </Section>
    </div>
  );
}
