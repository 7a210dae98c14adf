// /operator/apps: every app of the market, hidden ones too: find them, hide or show them, make
// them top picks, and publish or edit one (AppForm: texts in both languages, how it installs, its
// icon and an archive of its image). The form has its address (`?edit=<id>`, `?edit=new`): a
// reload or a link opens it again (issue 44 item 11).
import { useEffect, useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { fetchOpsApp, fetchOpsApps, updateApp } from '../../api/opsApps';
import type { OpsApp } from '../../api/types';
import { Field, SelectField } from '../../components/fields';
import { ActionError } from '../../components/form';
import { ActionTable, AsyncItems, PageHeader } from '../../components/sections';
import { categoryLabel } from '../../components/apps/cards';
import { useLang, useT } from '../../lib/i18n';
import { useAction } from '../../lib/useAction';
import { useAsync } from '../../lib/useAsync';
import { toast } from '../../stores/feedback';
import AppForm from './AppForm';
import { useAppsT } from './appsMessages';

type Shown = 'all' | 'listed' | 'hidden';
/** What the page shows: the list, or the form for a new app (`null` id) or an existing one. */
type View = { kind: 'list' } | { kind: 'form'; app: OpsApp | null };

export default function AppsPage() {
  const t = useAppsT();
  const lang = useLang();
  const common = useT();
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  const [shown, setShown] = useState<Shown>('all');
  const listed = shown === 'all' ? undefined : shown === 'listed';
  const state = useAsync((signal) => fetchOpsApps(q, listed, signal), [q, listed]);
  const [view, setViewState] = useState<View>({ kind: 'list' });
  const [params, setParams] = useSearchParams();
  const editing = params.get('edit');
  /** Shows the list or a form, and puts it in the address. */
  const setView = (v: View) => {
    setViewState(v);
    setParams(v.kind === 'form' ? { edit: v.app ? v.app.id : 'new' } : {}, { replace: v.kind === 'form' && editing === (v.app ? v.app.id : 'new') });
  };
  // The address names a form (a reload, a link, Back): show it.
  useEffect(() => {
    if (!editing) return setViewState({ kind: 'list' });
    if (editing === 'new') return setViewState((v) => (v.kind === 'form' && !v.app ? v : { kind: 'form', app: null }));
    if (view.kind === 'form' && view.app?.id === editing) return;
    const ctl = new AbortController();
    fetchOpsApp(editing, ctl.signal).then(
      (a) => setViewState({ kind: 'form', app: a }),
      () => undefined,
    );
    return () => ctl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [editing]);
  // Hiding, showing and picking: one at a time, a failure shown above the list.
  const toggle = useAction();
  const nameOf = (a: OpsApp) => (lang === 'zh' ? a.name_zh : a.name_en);
  const replace = (a: OpsApp) => state.setData((prev) => prev && { ...prev, items: prev.items.map((x) => (x.id === a.id ? a : x)) });
  const search = (e: FormEvent) => {
    e.preventDefault();
    setQ(typed.trim());
  };

  if (view.kind === 'form') {
    return (
      <AppForm
        app={view.app}
        onBack={() => {
          setView({ kind: 'list' });
          state.reload();
        }}
        onSaved={(a) => setView({ kind: 'form', app: a })}
      />
    );
  }
  return (
    <div className="page operator-apps">
      <PageHeader
        title={t('operator_apps')}
        subtitle={t('operator_apps_hint')}
        actions={
          <button type="button" className="button primary" onClick={() => setView({ kind: 'form', app: null })}>
            {t('apps_publish')}
          </button>
        }
      />
      <form className="row-actions operator-search" role="search" onSubmit={search}>
        <Field label={t('operator_search')} name="q" type="search" value={typed} onChange={(e) => setTyped(e.target.value)} placeholder={t('apps_search_hint')} />
        <SelectField<Shown>
          id="apps-shown"
          label={t('apps_filter')}
          value={shown}
          options={[
            ['all', t('apps_show_all')],
            ['listed', t('apps_show_listed')],
            ['hidden', t('apps_show_hidden')],
          ]}
          onChange={setShown}
        />
        <button type="submit" className="button primary">
          {t('operator_search_button')}
        </button>
      </form>
      <ActionError action={toggle} />
      <AsyncItems state={state} emptyIcon="app" emptyTitle={t('apps_none')}>
        {(items) => (
          <ActionTable columns={[t('apps_col_app'), t('apps_col_category'), t('apps_col_version'), t('apps_col_image'), t('apps_col_market')]} actionLabel={t('operator_col_actions')}>
            {items.map((a) => (
              <tr key={a.id} data-app={a.id}>
                <td>
                  <div className="ops-app-name">
                    <img src={a.icon_url} alt="" width={32} height={32} />
                    <div>
                      <strong>{nameOf(a)}</strong>
                      <p className="muted">
                        {a.id}
                        {a.origin === 'local' ? <span className="tag">{t('apps_local')}</span> : null}
                      </p>
                    </div>
                  </div>
                </td>
                <td>{categoryLabel(common, a.category)}</td>
                <td>{a.version}</td>
                <td className="ops-app-image">{a.image}</td>
                <td className="operator-status">
                  {a.listed ? t('apps_shown') : <span className="tag danger">{t('apps_hidden')}</span>}
                  {a.top_pick ? <span className="tag">{t('apps_top_pick')}</span> : null}
                </td>
                <td className="row-actions">
                  <button type="button" className="button ghost" onClick={() => setView({ kind: 'form', app: a })}>
                    {t('apps_edit')}
                  </button>
                  <button
                    type="button"
                    className={a.listed ? 'button ghost danger' : 'button ghost'}
                    disabled={toggle.busy}
                    onClick={() =>
                      void toggle.run(async () => {
                        replace(await updateApp(a.id, { listed: !a.listed }));
                        toast('success', t(a.listed ? 'apps_hidden_toast' : 'apps_shown_toast', { name: nameOf(a) }));
                      })
                    }
                  >
                    {a.listed ? t('apps_hide') : t('apps_show')}
                  </button>
                  <button
                    type="button"
                    className="button ghost"
                    aria-pressed={a.top_pick}
                    disabled={toggle.busy}
                    onClick={() =>
                      void toggle.run(async () => {
                        replace(await updateApp(a.id, { top_pick: !a.top_pick }));
                        toast('success', t(a.top_pick ? 'apps_unpicked_toast' : 'apps_picked_toast', { name: nameOf(a) }));
                      })
                    }
                  >
                    {a.top_pick ? t('apps_unpick') : t('apps_pick')}
                  </button>
                </td>
              </tr>
            ))}
          </ActionTable>
        )}
      </AsyncItems>
    </div>
  );
}
