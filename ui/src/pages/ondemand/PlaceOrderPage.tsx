import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, errorText } from '../../api/client';
import { useT } from '../../lib/i18n';
import { Field, PageHeader } from '../../components/ui';
import { Icon } from '../../components/Icon';
import { toast } from '../../stores/feedback';
import { useSession } from '../../stores/session';
import { paths } from '../../lib/paths';
import type { MessageKey } from '../../i18n';

/** Proposed call (API.md leaves demands to /api/rmp/v1): POST /api/rmp/v1/demands. */
export const DEMANDS_PATH = '/api/rmp/v1/demands';

function positiveInt(v: string): number | null {
  return /^\d+$/.test(v.trim()) && Number(v) > 0 ? Number(v) : null;
}

export function PlaceOrderPage() {
  const t = useT();
  const navigate = useNavigate();
  const [form, setForm] = useState({ name: '', app: '', gpuCount: '1', gpuModels: '', distance: '' });
  const [errors, setErrors] = useState<Partial<Record<keyof typeof form, MessageKey>>>({});
  const [busy, setBusy] = useState(false);
  const [serverError, setServerError] = useState<string | null>(null);
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next: typeof errors = {};
    if (!form.name.trim()) next.name = 'field_required';
    if (positiveInt(form.gpuCount) === null) next.gpuCount = 'must_be_positive';
    if (form.distance.trim() && positiveInt(form.distance) === null) next.distance = 'must_be_positive';
    setErrors(next);
    if (Object.keys(next).length) return;
    // The page is public; placing the order needs an account.
    if (!useSession.getState().token) {
      navigate(paths.auth.signIn(paths.onDemand.placeOrder));
      return;
    }
    setBusy(true);
    setServerError(null);
    try {
      await api.post(DEMANDS_PATH, {
        name: form.name.trim(),
        app: form.app.trim() || null,
        gpu_count: positiveInt(form.gpuCount),
        gpu_models: form.gpuModels.split(',').map((s) => s.trim()).filter(Boolean),
        distance_limit_km: form.distance.trim() ? positiveInt(form.distance) : null,
      });
      toast('success', t('order_submitted'));
      navigate(paths.onDemand.home);
    } catch (err) {
      setServerError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="page container narrow">
      <Link to={paths.onDemand.home} className="back-link">
        <Icon name="chevronLeft" size={16} /> {t('back')}
      </Link>
      <PageHeader title={t('place_an_order')} subtitle={t('on_demand_text')} />
      <form className="card form-card" onSubmit={submit} noValidate>
        <Field label={t('demand_name')} value={form.name} onChange={set('name')} error={errors.name && t(errors.name)} required />
        <Field label={t('app')} value={form.app} onChange={set('app')} />
        <Field
          label={t('gpu_count')}
          inputMode="numeric"
          value={form.gpuCount}
          onChange={set('gpuCount')}
          error={errors.gpuCount && t(errors.gpuCount)}
        />
        <Field label={t('gpu_models')} value={form.gpuModels} onChange={set('gpuModels')} />
        <Field
          label={t('distance_limit_km')}
          inputMode="numeric"
          value={form.distance}
          onChange={set('distance')}
          error={errors.distance && t(errors.distance)}
        />
        {serverError ? (
          <p className="form-error" role="alert">
            {serverError}
          </p>
        ) : null}
        <button type="submit" className="button primary" disabled={busy}>
          {t('submit_order')}
        </button>
      </form>
    </div>
  );
}
