import { useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { placeDemand } from '../../api/demands';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { useT } from '../../lib/i18n';
import { Field } from '../../components/fields';
import { PageHeader } from '../../components/sections';
import { Icon } from '../../components/Icon';
import { toast } from '../../stores/feedback';
import { useSession } from '../../stores/session';
import { paths } from '../../lib/paths';


function positiveInt(v: string): number | null {
  return /^\d+$/.test(v.trim()) && Number(v) > 0 ? Number(v) : null;
}

export function PlaceOrderPage() {
  const t = useT();
  const navigate = useNavigate();
  const [form, setForm] = useState({ name: '', app: '', gpuCount: '1', gpuModels: '', distance: '' });
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm((f) => ({ ...f, [k]: e.target.value }));
  const submission = useForm<'name' | 'gpuCount' | 'distance'>({
    validate: () => ({
      name: form.name.trim() ? null : 'field_required',
      gpuCount: positiveInt(form.gpuCount) === null ? 'must_be_positive' : null,
      distance: form.distance.trim() !== '' && positiveInt(form.distance) === null ? 'must_be_positive' : null,
    }),
    action: async () => {
      // The page is public; placing the order needs an account.
      if (!useSession.getState().token) {
        navigate(paths.auth.signIn(paths.onDemand.placeOrder()));
        return;
      }
      await placeDemand({
        name: form.name.trim(),
        app: form.app.trim() || null,
        gpu_count: positiveInt(form.gpuCount),
        gpu_models: form.gpuModels.split(',').map((s) => s.trim()).filter(Boolean),
        distance_limit_km: form.distance.trim() ? positiveInt(form.distance) : null,
      });
      toast('success', t('order_submitted'));
      navigate(paths.onDemand.home());
    },
  });

  return (
    <div className="page container narrow">
      <Link to={paths.onDemand.home()} className="back-link">
        <Icon name="chevronLeft" size={16} /> {t('back')}
      </Link>
      <PageHeader title={t('place_an_order')} subtitle={t('on_demand_text')} />
      <form className="card form-card" onSubmit={submission.submit} noValidate>
        <Field label={t('demand_name')} value={form.name} onChange={set('name')} error={submission.error('name')} required />
        <Field label={t('app')} value={form.app} onChange={set('app')} />
        <Field
          label={t('gpu_count')}
          inputMode="numeric"
          value={form.gpuCount}
          onChange={set('gpuCount')}
          error={submission.error('gpuCount')}
        />
        <Field label={t('gpu_models')} value={form.gpuModels} onChange={set('gpuModels')} />
        <Field
          label={t('distance_limit_km')}
          inputMode="numeric"
          value={form.distance}
          onChange={set('distance')}
          error={submission.error('distance')}
        />
        <FormError form={submission} />
        <SubmitButton form={submission}>{t('submit_order')}</SubmitButton>
      </form>
    </div>
  );
}
