// /on-demand/place-an-order: compose a demand (app, GPUs, models, the lowest CUDA and the VRAM per
// GPU, distance from your location, hours, price) with a live count of the online devices that satisfy it; posting holds price ×
// hours on the wallet. The page is public; posting needs a sign-in.
import { useEffect, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { fetchApplications } from '../../api/market';
import { fetchQualifying, postDemand } from '../../api/orders';
import type { DemandBody } from '../../api/types';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { Field, SelectField } from '../../components/fields';
import { PageHeader } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { formatCoins } from '../../lib/format';
import { useT } from '../../lib/i18n';
import { paths } from '../../lib/paths';
import { useAsync } from '../../lib/useAsync';
import { toast } from '../../stores/feedback';
import { useSession } from '../../stores/session';
import { useBoot } from '../../stores/boot';

const wholeIn = (v: string, min: number) => (/^\d+$/.test(v.trim()) && Number(v) >= min ? Number(v) : null);
/** Coins with at most two decimals → cents. */
const cents = (v: string) => (/^\d+(\.\d{1,2})?$/.test(v.trim()) && Number(v) > 0 ? Math.round(Number(v) * 100) : null);
const coord = (v: string, max: number) => (v.trim() !== '' && Number.isFinite(Number(v)) && Math.abs(Number(v)) <= max ? Number(v) : null);

/** Sizes are binary, as everywhere in the product: 1 GB = 1024³ bytes. */
const GB = 1024 ** 3;
/** The most VRAM per GPU a demand may ask: 16 TiB, as the server allows. */
const MAX_VRAM_GB = 16 * 1024;

/**
 * The form's minimum CUDA ("12.4") and VRAM per GPU (GB) as the demand sends them: empty is any
 * (null); `undefined` when a value is not one (the CUDA not `major.minor`, the GB not a number
 * from 0 to 16384). 0 GB is any, as the server reads it.
 */
export function gpuMinimums(cuda: string, vramGb: string): { min_cuda: string | null | undefined; min_vram: number | null | undefined } {
  const c = cuda.trim();
  const v = vramGb.trim();
  const gb = Number(v);
  return {
    min_cuda: c === '' ? null : /^\d{1,3}(\.\d{1,3})?$/.test(c) ? c : undefined,
    min_vram: v === '' ? null : /^\d+(\.\d+)?$/.test(v) && gb <= MAX_VRAM_GB ? Math.round(gb * GB) || null : undefined,
  };
}

const DRAFT_KEY = 'zm_order_draft';
type Draft = Record<'name' | 'app' | 'gpuCount' | 'gpuModels' | 'minCuda' | 'minVram' | 'distance' | 'lat' | 'lng' | 'hours' | 'price', string>;

function keepDraft(draft: Draft) {
  try {
    sessionStorage.setItem(DRAFT_KEY, JSON.stringify(draft));
  } catch {
    // Storage refused (private mode, quota): the form comes back empty, as before.
  }
}

function takeDraft(): Partial<Draft> | null {
  try {
    const raw = sessionStorage.getItem(DRAFT_KEY);
    sessionStorage.removeItem(DRAFT_KEY);
    const parsed: unknown = raw ? JSON.parse(raw) : null;
    if (!parsed || typeof parsed !== 'object') return null;
    // Only the form's own text fields are taken back.
    return Object.fromEntries(Object.entries(parsed).filter(([k, v]) => DRAFT_FIELDS.includes(k) && typeof v === 'string')) as Partial<Draft>;
  } catch {
    return null;
  }
}
const DRAFT_FIELDS = ['name', 'app', 'gpuCount', 'gpuModels', 'minCuda', 'minVram', 'distance', 'lat', 'lng', 'hours', 'price'];

export function PlaceOrderPage() {
  const t = useT();
  const navigate = useNavigate();
  const boot = useBoot();
  const signedIn = !!useSession((s) => s.token);
  const centre = boot.config.map.center;
  const [form, setForm] = useState<Draft>({
    name: '',
    app: '',
    gpuCount: '1',
    gpuModels: '',
    minCuda: '',
    minVram: '',
    distance: '',
    lat: String(centre.lat),
    lng: String(centre.lng),
    hours: '1',
    price: '1',
  });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));
  // A visitor's order survives the trip through sign-in (issue 26: it came back empty): kept in
  // this tab's session storage before leaving, restored once on return.
  useEffect(() => {
    const draft = takeDraft();
    if (draft) setForm((f) => ({ ...f, ...draft }));
  }, []);
  const apps = useAsync((signal) => fetchApplications({ limit: 100 }, signal), []);

  const body = (): DemandBody | null => {
    const gpu_count = wholeIn(form.gpuCount, 0);
    const hours = wholeIn(form.hours, 1);
    const price = cents(form.price);
    const distance = form.distance.trim() === '' ? null : wholeIn(form.distance, 1);
    const lat = coord(form.lat, 90);
    const lng = coord(form.lng, 180);
    const { min_cuda, min_vram } = gpuMinimums(form.minCuda, form.minVram);
    if (!form.app || gpu_count === null || hours === null || price === null) return null;
    if (form.distance.trim() !== '' && (distance === null || lat === null || lng === null)) return null;
    if (min_cuda === undefined || min_vram === undefined) return null;
    return { name: form.name.trim(), app_id: form.app, gpu_count, gpu_models: form.gpuModels, min_cuda, min_vram, distance_km: distance, lat, lng, hours, price_per_hour: price };
  };
  const terms = body();
  const termsKey = terms ? JSON.stringify({ ...terms, name: '', hours: 0, price_per_hour: 0 }) : '';

  // The live count, asked again (debounced) whenever the terms change.
  const [count, setCount] = useState<number | null>(null);
  useEffect(() => {
    setCount(null);
    if (!termsKey) return;
    const ctl = new AbortController();
    const timer = window.setTimeout(() => {
      fetchQualifying(JSON.parse(termsKey) as DemandBody, ctl.signal)
        .then((r) => setCount(r.count))
        .catch(() => {});
    }, 300);
    return () => {
      window.clearTimeout(timer);
      ctl.abort();
    };
  }, [termsKey]);

  const submission = useForm<'name' | 'gpuCount' | 'minCuda' | 'minVram' | 'distance' | 'lat' | 'hours' | 'price'>({
    // The server's 400 for a minimum shows under its field.
    serverFields: { min_cuda: 'minCuda', min_vram: 'minVram' },
    validate: () => ({
      name: form.name.trim() ? null : 'field_required',
      form: form.app ? null : 'choose_app',
      gpuCount: wholeIn(form.gpuCount, 0) === null ? 'must_be_positive' : null,
      minCuda: gpuMinimums(form.minCuda, '').min_cuda === undefined ? 'cuda_format' : null,
      minVram: gpuMinimums('', form.minVram).min_vram === undefined ? 'vram_format' : null,
      distance: form.distance.trim() !== '' && wholeIn(form.distance, 1) === null ? 'must_be_positive' : null,
      lat: form.distance.trim() !== '' && (coord(form.lat, 90) === null || coord(form.lng, 180) === null) ? 'field_required' : null,
      hours: wholeIn(form.hours, 1) === null ? 'must_be_positive' : null,
      price: cents(form.price) === null ? 'must_be_positive' : null,
    }),
    action: async () => {
      if (!useSession.getState().token) {
        keepDraft(form);
        navigate(paths.auth.signIn(paths.onDemand.placeOrder()));
        return;
      }
      const b = body();
      if (!b) return;
      await postDemand(b);
      toast('success', t('order_submitted'));
      navigate(paths.console.demands());
    },
  });
  const total = terms ? terms.price_per_hour * terms.hours : null;

  return (
    <div className="page container narrow">
      <Link to={paths.onDemand.home()} className="back-link">
        <Icon name="chevronLeft" size={16} /> {t('back')}
      </Link>
      <PageHeader title={t('place_an_order')} subtitle={t('on_demand_text')} />
      <form className="card form-card" onSubmit={submission.submit} noValidate>
        <Field label={t('demand_name')} value={form.name} onChange={set('name')} error={submission.error('name')} required />
        <SelectField
          id="demand-app"
          label={t('demand_app')}
          value={form.app}
          onChange={(v) => setForm((f) => ({ ...f, app: v }))}
          options={[['', t('choose_app')], ...(apps.data?.items ?? []).map((a): [string, string] => [a.id, a.name])]}
        />
        <Field label={t('gpu_count')} inputMode="numeric" value={form.gpuCount} onChange={set('gpuCount')} error={submission.error('gpuCount')} />
        <Field label={t('gpu_models')} value={form.gpuModels} onChange={set('gpuModels')} placeholder="A100, 4090" />
        <Field label={t('demand_min_cuda_label')} value={form.minCuda} onChange={set('minCuda')} error={submission.error('minCuda')} placeholder="12.4" />
        <Field label={t('demand_min_vram_label')} inputMode="decimal" value={form.minVram} onChange={set('minVram')} error={submission.error('minVram')} placeholder="80" />
        <Field label={t('distance_limit_km')} inputMode="numeric" value={form.distance} onChange={set('distance')} error={submission.error('distance')} />
        <fieldset className="field-row">
          <legend>{t('your_location')}</legend>
          <Field label={t('latitude')} inputMode="decimal" value={form.lat} onChange={set('lat')} error={submission.error('lat')} />
          <Field label={t('longitude')} inputMode="decimal" value={form.lng} onChange={set('lng')} />
        </fieldset>
        <Field label={t('demand_hours')} inputMode="numeric" value={form.hours} onChange={set('hours')} error={submission.error('hours')} />
        <Field label={t('demand_price')} inputMode="decimal" value={form.price} onChange={set('price')} error={submission.error('price')} />
        <p className="qualifying" role="status" data-testid="qualifying">
          {terms ? (count === null ? t('qualifying_checking') : t('qualifying_now', { count })) : null}
        </p>
        {total !== null ? <p className="muted">{t('demand_total', { total: formatCoins(total) })}</p> : null}
        <FormError form={submission} />
        <SubmitButton form={submission}>{signedIn ? t('submit_order') : t('sign_in_to_order')}</SubmitButton>
      </form>
    </div>
  );
}
