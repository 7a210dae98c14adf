// The "API keys" section of /account: create a key (name, expiry, what it may do), see the new
// key once (copy it), the list of keys (name, prefix…, context, scopes, created, last used,
// expires), revoke one. A key for the operator's console is offered to operators only and asks
// for their password (docs/identity.md, "API keys").
import { useRef, useState } from 'react';
import { createApiKey, fetchApiKeys, revokeApiKey } from '../../api/iam';
import type { ApiKey, ApiKeyCreated, ApiKeyScope, MenuEntry } from '../../api/types';
import { ConfirmDialog, Dialog, useConfirm } from '../../components/Dialog';
import { Field, PasswordField, SelectField } from '../../components/fields';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { Icon } from '../../components/Icon';
import { ActionTable, AsyncItems, Section } from '../../components/sections';
import { PERSONAL_SME_ID } from '../../constants';
import { formatDate, formatDateTime, toEpochMs } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { useAsync } from '../../lib/useAsync';
import { validateApiKeyName } from '../../lib/validation';
import { toast, withLoading } from '../../stores/feedback';
import { useSession } from '../../stores/session';

type Expiry = '7' | '30' | '90' | '365';

const DAY_MS = 86_400_000;

const SCOPES: ApiKeyScope[] = ['read', 'apps', 'wallet'];

/** Whether the signed-in person runs the market (their menu has the operator's console). */
function useIsOperator(): boolean {
  const menu = useSession((s) => s.menu);
  const personal = useSession((s) => s.smeId === PERSONAL_SME_ID);
  const has = (list: MenuEntry[]): boolean => list.some((e) => e.path === '/operator' || e.path === 'operator' || has(e.children ?? []));
  return personal && !!menu && has(menu);
}

function CreateKey({ onCreated }: { onCreated: (key: ApiKeyCreated) => void }) {
  const t = useT();
  const operator = useIsOperator();
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState<Expiry>('90');
  const [scopes, setScopes] = useState<ApiKeyScope[]>(['read', 'apps']);
  const [password, setPassword] = useState('');
  const ops = scopes.includes('ops');
  const form = useForm<'name' | 'expiry' | 'scopes' | 'password'>({
    validate: () => ({ name: validateApiKeyName(name), password: ops && !password ? 'api_key_ops_confirm' : undefined }),
    action: async () => {
      const expiresAt = new Date(Date.now() + Number(expiry) * DAY_MS).toISOString();
      const created = await withLoading(() => createApiKey({ name: name.trim(), expires_at: expiresAt, scopes, ...(ops ? { password } : {}) }));
      setName('');
      setExpiry('90');
      setScopes(['read', 'apps']);
      setPassword('');
      onCreated(created);
    },
    serverFields: { name: 'name', expires_at: 'expiry', scopes: 'scopes', password: 'password' },
  });
  const options: [Expiry, string][] = [
    ['7', t('api_key_days', { days: 7 })],
    ['30', t('api_key_days', { days: 30 })],
    ['90', t('api_key_days', { days: 90 })],
    ['365', t('api_key_year')],
  ];
  const toggle = (scope: ApiKeyScope, on: boolean) => setScopes((now) => (on ? [...now, scope] : now.filter((s) => s !== scope)));
  return (
    <form className="api-key-form" onSubmit={form.submit} noValidate aria-label={t('api_key_create')}>
      <Field
        label={t('api_key_name')}
        value={name}
        onChange={(e) => setName(e.target.value)}
        error={form.error('name')}
        autoComplete="off"
        maxLength={200}
      />
      <SelectField id="api-key-expiry" label={t('api_key_expiry')} value={expiry} options={options} onChange={setExpiry} />
      <SubmitButton form={form}>{t('api_key_create')}</SubmitButton>
      <fieldset className="api-key-scopes">
        <legend>{t('api_key_scopes')}</legend>
        {(operator ? [...SCOPES, 'ops' as const] : SCOPES).map((scope) => (
          <label key={scope} className="checkbox-row">
            <input type="checkbox" name={`scope-${scope}`} checked={scopes.includes(scope)} onChange={(e) => toggle(scope, e.target.checked)} />
            <span>{t(`api_key_scope_${scope}` as const)}</span>
          </label>
        ))}
      </fieldset>
      {ops ? (
        <div className="api-key-ops">
          <p className="api-key-warning" role="note">
            <Icon name="warning" size={18} />
            <span>{t('api_key_ops_warning')}</span>
          </p>
          <PasswordField label={t('api_key_ops_password')} autoComplete="current-password" value={password} onChange={(e) => setPassword(e.target.value)} error={form.error('password')} />
        </div>
      ) : null}
      {form.error('expiry') || form.error('scopes') ? (
        <p className="field-error" role="alert">
          {form.error('expiry') ?? form.error('scopes')}
        </p>
      ) : null}
      <FormError form={form} />
    </form>
  );
}

/** The new key, shown this once: copy it, then it is forgotten. */
function NewKey({ created, onClose }: { created: ApiKeyCreated; onClose: () => void }) {
  const t = useT();
  const value = useRef<HTMLElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.key);
      toast('success', t('api_key_copied'));
    } catch {
      // No clipboard (an insecure origin, a refused permission): select it for a manual copy.
      const range = document.createRange();
      if (value.current) range.selectNodeContents(value.current);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
      toast('warning', t('api_key_copy_failed'));
    }
  };
  return (
    <Dialog
      open
      title={t('api_key_new_title')}
      onClose={onClose}
      footer={
        <button type="button" className="button primary" onClick={onClose}>
          {t('api_key_done')}
        </button>
      }
    >
      <p className="api-key-warning" role="note">
        <Icon name="warning" size={18} />
        <span>{t('api_key_new_warning')}</span>
      </p>
      <p className="api-key-name">{created.name}</p>
      <div className="api-key-reveal">
        <code ref={value} className="api-key-value" aria-label={created.name}>
          {created.key}
        </code>
        <button type="button" className="button ghost small" onClick={() => void copy()}>
          {t('api_key_copy')}
        </button>
      </div>
    </Dialog>
  );
}

function expired(key: ApiKey): boolean {
  const at = toEpochMs(key.expires_at);
  return at !== null && at <= Date.now();
}

export function ApiKeys() {
  const t = useT();
  const keys = useAsync((_signal) => fetchApiKeys(), []);
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  const orgs = useSession((s) => s.organizationList);
  const contextName = (smeId: string) =>
    smeId === PERSONAL_SME_ID ? t('personal') : (orgs.find((o) => o.id === smeId)?.name ?? smeId);
  const revoke = useConfirm(async (key: ApiKey) => {
    await withLoading(() => revokeApiKey(key.id));
    toast('success', t('api_key_revoked'));
    keys.refresh();
  });
  return (
    <Section className="card api-keys" id="api-keys-title" title={t('api_keys')}>
      <p className="muted">
        {t('api_keys_intro')} <code>Authorization: Bearer zk_…</code>
      </p>
      <CreateKey
        onCreated={(key) => {
          toast('success', t('api_key_created'));
          setCreated(key);
          keys.refresh();
        }}
      />
      <AsyncItems state={keys} emptyIcon="link" emptyTitle={t('api_key_none')}>
        {(items) => {
          // The context is named only when some key acts in a company.
          const companies = items.some((k) => k.smeId !== PERSONAL_SME_ID);
          return (
            <ActionTable
              columns={[
                t('api_key_name'),
                t('api_key_prefix'),
                companies && t('api_key_context'),
                t('api_key_scopes'),
                t('api_key_created_at'),
                t('api_key_last_used'),
                t('api_key_expiry'),
              ]}
              actionLabel={t('actions')}
            >
              {items.map((key) => (
                <tr key={key.id} data-key={key.id}>
                  <td>{key.name}</td>
                  <td className="mono nowrap">{key.prefix}…</td>
                  {companies ? <td>{contextName(key.smeId)}</td> : null}
                  <td>{key.scopes.map((s) => t(`api_key_scope_${s}_short` as const)).join(' · ')}</td>
                  <td className="nowrap">{formatDate(key.created_at)}</td>
                  <td className="nowrap">{key.last_used_at ? formatDateTime(key.last_used_at) : t('api_key_never_used')}</td>
                  <td className={expired(key) ? 'nowrap api-key-expired' : 'nowrap'}>
                    {key.expires_at ? formatDate(key.expires_at) : '—'}
                    {expired(key) ? ` (${t('api_key_expired')})` : null}
                  </td>
                  <td className="row-actions">
                    <button type="button" className="button ghost small" aria-label={`${t('api_key_revoke')} ${key.name}`} onClick={() => revoke.ask(key)}>
                      {t('api_key_revoke')}
                    </button>
                  </td>
                </tr>
              ))}
            </ActionTable>
          );
        }}
      </AsyncItems>
      {created ? <NewKey created={created} onClose={() => setCreated(null)} /> : null}
      <ConfirmDialog
        {...revoke.dialog}
        title={t('api_key_revoke_title')}
        text={t('api_key_revoke_text', { name: revoke.subject?.name ?? '' })}
        confirmLabel={t('api_key_revoke')}
      />
    </Section>
  );
}
