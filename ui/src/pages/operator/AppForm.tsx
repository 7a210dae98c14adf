// The form of one app in the operator's console: publish a new one or edit one (every field the
// market shows, in both languages, and how it installs: image, ports with the web one, data
// folders, health path), then its icon and an archive of its image (with the upload's progress).
// The form keeps the app's `revision`: an upload here moves the image, version and revision the
// form shows; a save the server calls stale (`stale_edit`: the app changed elsewhere) reloads the
// form, the server's message saying why (issue 44 item 1).
import { useEffect, useRef, useState, type ChangeEvent } from 'react';
import { createApp, fetchOpsApp, updateApp, uploadIcon, uploadImage } from '../../api/opsApps';
import type { ImageUpload, OpsApp, OpsAppRequest } from '../../api/types';
import { Field, SelectField, TextAreaField } from '../../components/fields';
import { ActionError, FormError, SubmitButton, useForm } from '../../components/form';
import { PageHeader, Section } from '../../components/sections';
import { categoryLabel, displayTypeLabel, tierLabel } from '../../components/apps/cards';
import { formatSize } from '../../lib/format';
import { ApiError } from '../../lib/http';
import { useLang, useT, type TFunction } from '../../lib/i18n';
import { useAction } from '../../lib/useAction';
import { toast } from '../../stores/feedback';
import { useAppsT } from './appsMessages';

const CATEGORIES = ['AI', 'Metaverse', 'Game', 'Work', 'Home', 'Others', 'Z-CLOUD'] as const;
const DISPLAY_TYPES = ['Desktop', 'Lite App', 'NAS', 'AI compute', 'Server', 'Remote desktop', 'AI server', 'Z-SERVER'] as const;
const TIERS = ['high', 'standard', 'basic'] as const;
const GB = 1024 * 1024 * 1024;

type Port = { container: string; name: string; protocol: 'tcp' | 'udp'; web: boolean };
type Volume = { name: string; path: string };
type Draft = {
  id: string;
  name_en: string;
  name_zh: string;
  summary_en: string;
  summary_zh: string;
  description_en: string;
  description_zh: string;
  category: OpsApp['category'];
  display_type: OpsApp['display_type'];
  tier: OpsApp['tier'];
  kind: OpsApp['kind'];
  publisher: string;
  version: string;
  cpu: string;
  memory: string;
  disk: string;
  gpus: string;
  image: string;
  ports: Port[];
  volumes: Volume[];
  health: string;
  listed: boolean;
  top_pick: boolean;
  /** The app's revision the form was loaded from (0 for a new one). */
  revision: number;
};
/** The form's fields that a server answer may name (`data.field`). */
type FieldName =
  | 'id'
  | 'name_en'
  | 'name_zh'
  | 'summary_en'
  | 'summary_zh'
  | 'description_en'
  | 'description_zh'
  | 'publisher'
  | 'version'
  | 'requirements'
  | 'image'
  | 'ports'
  | 'volumes'
  | 'health'
  | 'category'
  | 'display_type'
  | 'tier'
  | 'kind';
const SERVER_FIELDS: Record<string, FieldName> = Object.fromEntries(
  (['id', 'name_en', 'name_zh', 'summary_en', 'summary_zh', 'description_en', 'description_zh', 'publisher', 'version', 'requirements', 'image', 'ports', 'volumes', 'health', 'category', 'display_type', 'tier', 'kind'] as FieldName[]).map((f) => [f, f]),
);

const gbText = (bytes: number) => String(Math.round((bytes / GB) * 100) / 100);

function draftOf(a: OpsApp | null): Draft {
  if (!a) {
    return {
      id: '', name_en: '', name_zh: '', summary_en: '', summary_zh: '', description_en: '', description_zh: '',
      category: 'Work', display_type: 'Server', tier: 'basic', kind: 'own', publisher: '', version: '1.0',
      cpu: '1', memory: '0.5', disk: '1', gpus: '0', image: '',
      ports: [{ container: '80', name: 'web', protocol: 'tcp', web: true }], volumes: [], health: '', listed: true, top_pick: false, revision: 0,
    };
  }
  return {
    id: a.id, name_en: a.name_en, name_zh: a.name_zh, summary_en: a.summary_en, summary_zh: a.summary_zh,
    description_en: a.description_en, description_zh: a.description_zh, category: a.category, display_type: a.display_type,
    tier: a.tier, kind: a.kind, publisher: a.publisher, version: a.version,
    cpu: String(a.requirements.cpu_cores), memory: gbText(a.requirements.memory_bytes), disk: gbText(a.requirements.disk_bytes),
    gpus: String(a.requirements.gpu_count), image: a.image,
    ports: a.ports.map((p) => ({ container: String(p.container), name: p.name ?? '', protocol: p.protocol === 'udp' ? 'udp' : 'tcp', web: p.web })),
    volumes: a.volumes.map((v) => ({ name: v.name, path: v.path })), health: a.health ?? '', listed: a.listed, top_pick: a.top_pick,
    revision: a.revision,
  };
}

/** The request of a draft: numbers as the server counts them (bytes); text as typed (it trims). */
function requestOf(d: Draft, creating: boolean): OpsAppRequest {
  const num = (s: string) => (s.trim() === '' ? Number.NaN : Number(s));
  return {
    ...(creating ? { id: d.id.trim() } : {}),
    name_en: d.name_en, name_zh: d.name_zh, summary_en: d.summary_en, summary_zh: d.summary_zh,
    description_en: d.description_en, description_zh: d.description_zh,
    category: d.category, display_type: d.display_type, tier: d.tier, kind: d.kind, publisher: d.publisher, version: d.version,
    requirements: {
      cpu_cores: Math.round(num(d.cpu)),
      memory_bytes: Math.round(num(d.memory) * GB),
      disk_bytes: Math.round(num(d.disk) * GB),
      gpu_count: Math.round(num(d.gpus)),
    },
    image: d.image,
    ports: d.ports.map((p) => ({ container: Math.round(num(p.container)), name: p.name.trim() || null, protocol: p.protocol, web: p.web })),
    volumes: d.volumes,
    health: d.health.trim() || null,
    listed: d.listed,
    top_pick: d.top_pick,
    ...(creating ? {} : { revision: d.revision }),
  };
}

export default function AppForm({ app, onBack, onSaved }: { app: OpsApp | null; onBack: () => void; onSaved: (a: OpsApp) => void }) {
  const t = useAppsT();
  const lang = useLang();
  const common = useT();
  const creating = app === null;
  const [d, setD] = useState<Draft>(() => draftOf(app));
  const set = (patch: Partial<Draft>) => setD((prev) => ({ ...prev, ...patch }));
  // The app changed under the form (an icon or an archive uploaded below): what that changes
  // (the image, its version) is shown, the rest of what is being typed stays.
  useEffect(() => {
    if (app && app.revision !== d.revision) setD((prev) => ({ ...prev, image: app.image, version: app.version, revision: app.revision }));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [app?.revision]);
  const text = (name: keyof Draft) => ({
    name,
    value: d[name] as string,
    onChange: (e: ChangeEvent<HTMLInputElement>) => set({ [name]: e.target.value } as Partial<Draft>),
  });
  const form = useForm<FieldName>({
    action: async () => {
      const body = requestOf(d, creating);
      let saved: OpsApp;
      try {
        saved = creating ? await createApp(body) : await updateApp(app.id, body);
      } catch (e) {
        if (!creating && e instanceof ApiError && e.error === 'stale_edit') {
          // Changed since it was opened: show what it is now; the message says why.
          const fresh = await fetchOpsApp(app.id);
          setD(draftOf(fresh));
          onSaved(fresh);
        }
        throw e;
      }
      const name = lang === 'zh' ? saved.name_zh : saved.name_en;
      toast('success', t(creating ? 'apps_published_toast' : 'apps_saved_toast', { name }));
      setD(draftOf(saved));
      onSaved(saved);
    },
    serverFields: SERVER_FIELDS,
  });
  const err = (f: FieldName) => form.error(f);
  const title = creating ? t('apps_new_title') : t('apps_edit_title', { name: lang === 'zh' ? app.name_zh : app.name_en });
  const setPort = (i: number, patch: Partial<Port>) =>
    set({ ports: d.ports.map((p, j) => (j === i ? { ...p, ...patch } : patch.web ? { ...p, web: false } : p)) });
  const setVolume = (i: number, patch: Partial<Volume>) => set({ volumes: d.volumes.map((v, j) => (j === i ? { ...v, ...patch } : v)) });
  // Each choice in the reader's language, as the market names it (the value sent stays the wire value).
  const choices = <V extends string>(values: readonly V[], label: (t: TFunction, v: V) => string) => values.map((v) => [v, label(common, v)] as [V, string]);

  return (
    <div className="page operator-app-form">
      <PageHeader
        title={title}
        actions={
          <button type="button" className="button ghost" onClick={onBack}>
            {t('apps_back')}
          </button>
        }
      />
      <form onSubmit={form.submit} noValidate className="ops-app-form">
        <Section id="app-market" title={t('apps_section_market')}>
          {creating ? <Field label={t('apps_id')} hint={t('apps_id_hint')} error={err('id')} maxLength={64} {...text('id')} /> : null}
          <div className="ops-app-grid">
            <Field label={t('apps_name_en')} error={err('name_en')} maxLength={60} {...text('name_en')} />
            <Field label={t('apps_name_zh')} error={err('name_zh')} maxLength={60} {...text('name_zh')} />
            <Field label={t('apps_summary_en')} error={err('summary_en')} maxLength={200} {...text('summary_en')} />
            <Field label={t('apps_summary_zh')} error={err('summary_zh')} maxLength={200} {...text('summary_zh')} />
            <TextArea label={t('apps_description_en')} error={err('description_en')} value={d.description_en} onChange={(v) => set({ description_en: v })} />
            <TextArea label={t('apps_description_zh')} error={err('description_zh')} value={d.description_zh} onChange={(v) => set({ description_zh: v })} />
            <SelectField id="app-category" label={t('apps_category')} value={d.category} options={choices(CATEGORIES, categoryLabel)} onChange={(v) => set({ category: v })} />
            <SelectField id="app-display-type" label={t('apps_display_type')} value={d.display_type} options={choices(DISPLAY_TYPES, displayTypeLabel)} onChange={(v) => set({ display_type: v })} />
            <SelectField id="app-tier" label={t('apps_tier')} value={d.tier} options={choices(TIERS, tierLabel)} onChange={(v) => set({ tier: v })} />
            <SelectField
              id="app-kind"
              label={t('apps_kind')}
              value={d.kind}
              options={[
                ['own', t('apps_kind_own')],
                ['rent', t('apps_kind_rent')],
              ]}
              onChange={(v) => set({ kind: v })}
              hint={t('apps_kind_hint')}
            />
            <Field label={t('apps_publisher')} error={err('publisher')} maxLength={60} {...text('publisher')} />
            <Field label={t('apps_version')} hint={t('apps_version_hint')} error={err('version')} maxLength={40} {...text('version')} />
          </div>
          <div className="ops-app-grid four">
            <Field label={t('apps_cpu')} inputMode="numeric" error={err('requirements')} {...text('cpu')} />
            <Field label={t('apps_memory')} inputMode="decimal" {...text('memory')} />
            <Field label={t('apps_disk')} inputMode="decimal" {...text('disk')} />
            <Field label={t('apps_gpus')} inputMode="numeric" {...text('gpus')} />
          </div>
          <label className="checkbox-row">
            <input type="checkbox" name="listed" checked={d.listed} onChange={(e) => set({ listed: e.target.checked })} />
            <span>{t('apps_listed')}</span>
          </label>
          <label className="checkbox-row">
            <input type="checkbox" name="top_pick" checked={d.top_pick} onChange={(e) => set({ top_pick: e.target.checked })} />
            <span>{t('apps_top_pick_field')}</span>
          </label>
        </Section>

        <Section id="app-install" title={t('apps_section_install')}>
          <Field label={t('apps_image')} hint={t('apps_image_hint')} error={err('image')} {...text('image')} />
          <fieldset className={err('ports') ? 'ops-rows has-error' : 'ops-rows'}>
            <legend>{t('apps_ports')}</legend>
            {d.ports.map((p, i) => (
              <div className="ops-row" key={i}>
                <Field label={t('apps_port_container')} name={`port-${i}`} inputMode="numeric" value={p.container} onChange={(e) => setPort(i, { container: e.target.value })} />
                <Field label={t('apps_port_name')} name={`port-name-${i}`} value={p.name} maxLength={40} onChange={(e) => setPort(i, { name: e.target.value })} />
                <SelectField<'tcp' | 'udp'>
                  id={`port-protocol-${i}`}
                  label={t('apps_port_protocol')}
                  value={p.protocol}
                  options={[
                    ['tcp', 'TCP'],
                    ['udp', 'UDP'],
                  ]}
                  onChange={(v) => setPort(i, { protocol: v })}
                />
                <label className="checkbox-row">
                  <input type="radio" name="web-port" checked={p.web} onChange={() => setPort(i, { web: true })} />
                  <span>{t('apps_port_web')}</span>
                </label>
                <button type="button" className="button ghost danger" onClick={() => set({ ports: d.ports.filter((_, j) => j !== i) })}>
                  {t('apps_port_remove', { port: p.container || i + 1 })}
                </button>
              </div>
            ))}
            {err('ports') ? (
              <p className="field-error" role="alert">
                {err('ports')}
              </p>
            ) : null}
            <button type="button" className="button ghost" onClick={() => set({ ports: [...d.ports, { container: '', name: '', protocol: 'tcp', web: false }] })}>
              {t('apps_port_add')}
            </button>
          </fieldset>
          <fieldset className={err('volumes') ? 'ops-rows has-error' : 'ops-rows'}>
            <legend>{t('apps_volumes')}</legend>
            {d.volumes.map((v, i) => (
              <div className="ops-row" key={i}>
                <Field label={t('apps_volume_name')} name={`volume-name-${i}`} value={v.name} onChange={(e) => setVolume(i, { name: e.target.value })} />
                <Field label={t('apps_volume_path')} name={`volume-path-${i}`} value={v.path} onChange={(e) => setVolume(i, { path: e.target.value })} />
                <button type="button" className="button ghost danger" onClick={() => set({ volumes: d.volumes.filter((_, j) => j !== i) })}>
                  {t('apps_volume_remove', { name: v.name || i + 1 })}
                </button>
              </div>
            ))}
            {err('volumes') ? (
              <p className="field-error" role="alert">
                {err('volumes')}
              </p>
            ) : null}
            <button type="button" className="button ghost" onClick={() => set({ volumes: [...d.volumes, { name: '', path: '' }] })}>
              {t('apps_volume_add')}
            </button>
          </fieldset>
          <Field label={t('apps_health')} hint={t('apps_health_hint')} error={err('health')} {...text('health')} />
        </Section>
        <FormError form={form} />
        <div className="row-actions">
          <SubmitButton form={form}>{creating ? t('apps_create') : t('apps_save')}</SubmitButton>
        </div>
      </form>

      <Section id="app-files" title={t('apps_section_files')}>
        {app ? <AppFiles app={app} onChanged={onSaved} /> : <p className="muted">{t('apps_files_after_publish')}</p>}
      </Section>
    </div>
  );
}

function TextArea({ label, error, value, onChange }: { label: string; error?: string; value: string; onChange: (v: string) => void }) {
  return <TextAreaField label={label} error={error} value={value} maxLength={5000} onChange={(e) => onChange(e.target.value)} />;
}

/** The icon (uploaded as soon as it is chosen) and the image archive (with its progress). */
function AppFiles({ app, onChanged }: { app: OpsApp; onChanged: (a: OpsApp) => void }) {
  const t = useAppsT();
  const [archive, setArchive] = useState<File | null>(null);
  // The file the upload sends: set as it is chosen, which starts the upload (no second click).
  const chosen = useRef<File | null>(null);
  const [share, setShare] = useState<number | null>(null);
  const [done, setDone] = useState<ImageUpload | null>(null);
  const icon = useAction();
  const upload = useForm({
    action: async () => {
      const archive = chosen.current;
      if (!archive) return;
      setDone(null);
      setShare(0);
      try {
        const result = await uploadImage(app.id, archive, setShare);
        setDone(result);
        // The app may now install another image, under a new version.
        onChanged(await fetchOpsApp(app.id));
      } finally {
        setShare(null);
      }
    },
  });
  const percent = share === null ? 0 : Math.round(share * 100);
  return (
    <div className="ops-app-files">
      <div className="ops-app-icon">
        <img src={app.icon_url} alt="" width={64} height={64} />
        <div className="field">
          <label htmlFor="app-icon-file">{t('apps_icon')}</label>
          <input
            id="app-icon-file"
            type="file"
            accept="image/png,image/jpeg,image/webp"
            disabled={icon.busy}
            onChange={(e) => {
              const file = e.target.files?.[0];
              e.target.value = '';
              if (file)
                void icon.run(async () => {
                  onChanged(await uploadIcon(app.id, file));
                  toast('success', t('apps_icon_uploaded'));
                });
            }}
          />
          <p className="field-hint">{t('apps_icon_hint')}</p>
          <ActionError action={icon} />
        </div>
      </div>
      <form className="ops-app-archive" onSubmit={upload.submit} noValidate>
        <div className="field">
          <label htmlFor="app-archive-file">{t('apps_archive')}</label>
          <input
            id="app-archive-file"
            type="file"
            accept=".tar,application/x-tar"
            disabled={upload.busy}
            onChange={(e) => {
              const file = e.target.files?.[0] ?? null;
              chosen.current = file;
              setArchive(file);
              if (file) e.currentTarget.form?.requestSubmit();
            }}
          />
          <p className="field-hint">{t('apps_archive_hint')}</p>
        </div>
        <p className="muted" data-testid="archive-held">
          {app.archive ? t('apps_archive_held', { size: formatSize(app.archive.size) }) : t('apps_archive_none')}
        </p>
        {upload.busy ? (
          <div className="app-progress" role="progressbar" aria-valuemin={0} aria-valuemax={100} aria-valuenow={percent} aria-label={t('apps_archive')}>
            <div className="app-progress-fill" style={{ width: `${percent}%` }} />
            <span className="app-progress-text">{share !== null && share < 1 ? t('apps_archive_uploading', { percent }) : t('apps_archive_checking')}</span>
          </div>
        ) : null}
        {done ? (
          <p className="ops-archive-done" role="status">
            {t('apps_archive_done', { size: formatSize(done.size), image: done.image, sha: done.sha256.slice(0, 12) })}
          </p>
        ) : null}
        <FormError form={upload} />
        <button type="submit" className="button primary" disabled={!archive || upload.busy}>
          {t('apps_archive_upload')}
        </button>
      </form>
    </div>
  );
}
