// /operator/people: find people by email or name; suspend (with a reason, shown to them at
// sign-in) or unsuspend; grant coins into a wallet (one Idempotency-Key per submission, so a retry
// grants once).
import { useRef, useState, type FormEvent } from 'react';
import { fetchUsers, grantCoins, suspendUser, unsuspendUser } from '../../api/ops';
import type { OpsUser } from '../../api/types';
import { Dialog } from '../../components/Dialog';
import { Field } from '../../components/fields';
import { ActionError, FormError, SubmitButton, useForm } from '../../components/form';
import { LoadMore } from '../../components/LoadMore';
import { ActionTable, AsyncItems, PageHeader } from '../../components/sections';
import { formatCoins, formatDate, parseCoins } from '../../lib/format';
import { useAction } from '../../lib/useAction';
import { useAsync } from '../../lib/useAsync';
import { toast } from '../../stores/feedback';
import { useOpsT } from './operatorText';

const newKey = () => `grant-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

type Open = { kind: 'suspend' | 'grant'; user: OpsUser } | null;

export default function PeoplePage() {
  const t = useOpsT();
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  const state = useAsync((signal) => fetchUsers(q, 0, signal), [q]);
  const [open, setOpen] = useState<Open>(null);
  const replace = (u: OpsUser) => state.setData((prev) => prev && { ...prev, items: prev.items.map((x) => (x.id === u.id ? u : x)) });
  // Unsuspending is one click: one at a time, a failure shown above the list.
  const unsuspend = useAction();
  const search = (e: FormEvent) => {
    e.preventDefault();
    setQ(typed.trim());
  };
  return (
    <div className="page operator-people">
      <PageHeader title={t('operator_people')} subtitle={t('operator_people_hint')} />
      <form className="row-actions operator-search" role="search" onSubmit={search}>
        <Field label={t('operator_search')} name="q" type="search" value={typed} onChange={(e) => setTyped(e.target.value)} placeholder={t('operator_search_hint')} />
        <button type="submit" className="button primary">
          {t('operator_search_button')}
        </button>
      </form>
      <ActionError action={unsuspend} />
      <AsyncItems state={state} emptyIcon="account" emptyTitle={t('operator_people_none')}>
        {(items) => (
          <ActionTable
            columns={[t('operator_col_email'), t('operator_col_name'), t('operator_col_balance'), t('operator_col_devices'), t('operator_col_joined'), t('operator_col_status')]}
            actionLabel={t('operator_col_actions')}
          >
            {items.map((u) => (
              <tr key={u.id} data-email={u.email}>
                <td>{u.email}</td>
                <td>{u.name}</td>
                <td>{formatCoins(u.balance)}</td>
                <td>{u.devices}</td>
                <td>{formatDate(u.created_at)}</td>
                <td className="operator-status">
                  {u.suspended ? <span className="tag danger">{t('operator_suspended')}</span> : u.verified ? t('operator_active') : t('operator_unverified')}
                  {u.operator ? <span className="tag">{t('operator')}</span> : null}
                  {u.suspended && u.suspended_reason ? <p className="muted">{u.suspended_reason}</p> : null}
                </td>
                <td className="row-actions">
                  {u.suspended ? (
                    <button
                      type="button"
                      className="button ghost"
                      disabled={unsuspend.busy}
                      onClick={() =>
                        void unsuspend.run(async () => {
                          replace(await unsuspendUser(u.id));
                          toast('success', t('operator_unsuspended_toast', { email: u.email }));
                        })
                      }
                    >
                      {t('operator_unsuspend')}
                    </button>
                  ) : (
                    <button type="button" className="button ghost danger" onClick={() => setOpen({ kind: 'suspend', user: u })}>
                      {t('operator_suspend')}
                    </button>
                  )}
                  <button type="button" className="button ghost" onClick={() => setOpen({ kind: 'grant', user: u })}>
                    {t('operator_grant')}
                  </button>
                </td>
              </tr>
            ))}
          </ActionTable>
        )}
      </AsyncItems>
      <LoadMore state={state} fetchPage={(offset) => fetchUsers(q, offset)} />
      {open?.kind === 'suspend' ? <SuspendDialog user={open.user} onClose={() => setOpen(null)} onDone={replace} /> : null}
      {open?.kind === 'grant' ? <GrantDialog user={open.user} onClose={() => setOpen(null)} onDone={(balance) => replace({ ...open.user, balance })} /> : null}
    </div>
  );
}

function SuspendDialog({ user, onClose, onDone }: { user: OpsUser; onClose: () => void; onDone: (u: OpsUser) => void }) {
  const t = useOpsT();
  const [reason, setReason] = useState('');
  const form = useForm<'reason'>({
    validate: () => ({ reason: reason.trim() ? null : 'operator_reason_required' }),
    action: async () => {
      onDone(await suspendUser(user.id, reason.trim()));
      toast('success', t('operator_suspended_toast', { email: user.email }));
      onClose();
    },
    serverErrorField: 'reason',
  });
  return (
    <Dialog open title={t('operator_suspend_title', { email: user.email })} onClose={onClose}>
      <form onSubmit={form.submit} noValidate>
        <p>{t('operator_suspend_text')}</p>
        <Field label={t('operator_reason')} name="reason" value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} error={form.error('reason')} hint={t('operator_reason_hint')} />
        <FormError form={form} />
        <div className="row-actions">
          <SubmitButton form={form} className="button danger">
            {t('operator_suspend')}
          </SubmitButton>
          <button type="button" className="button ghost" onClick={onClose}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function GrantDialog({ user, onClose, onDone }: { user: OpsUser; onClose: () => void; onDone: (balance: number) => void }) {
  const t = useOpsT();
  const [amount, setAmount] = useState('');
  const [memo, setMemo] = useState('');
  const key = useRef({ typed: '', key: newKey() });
  const form = useForm<'amount' | 'memo'>({
    validate: () => ({ amount: parseCoins(amount) === null ? 'operator_amount_invalid' : null }),
    action: async () => {
      const cents = parseCoins(amount) ?? 0;
      const typed = `${cents}|${memo.trim()}`;
      if (key.current.typed !== typed) key.current = { typed, key: newKey() };
      const entry = await grantCoins(user.id, cents, memo.trim(), key.current.key);
      onDone(entry.balance_after);
      toast('success', t('operator_granted_toast', { amount: formatCoins(cents), email: user.email }));
      onClose();
    },
    serverErrorField: 'amount',
  });
  return (
    <Dialog open title={t('operator_grant_title', { email: user.email })} onClose={onClose}>
      <form onSubmit={form.submit} noValidate>
        <Field label={t('operator_amount')} name="amount" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.target.value)} error={form.error('amount')} hint={t('operator_amount_hint')} />
        <Field label={t('operator_memo')} name="memo" value={memo} maxLength={200} onChange={(e) => setMemo(e.target.value)} error={form.error('memo')} />
        <FormError form={form} />
        <div className="row-actions">
          <SubmitButton form={form}>{t('operator_grant')}</SubmitButton>
          <button type="button" className="button ghost" onClick={onClose}>
            {t('cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
