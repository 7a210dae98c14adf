import { useState } from 'react';
import { useNavigate } from 'react-router';
import { createZcloud, fetchZcloudCapacity } from '../../api/devices';
import { useAsync } from '../../lib/useAsync';
import { hostFreeText } from './deviceInfo';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { SIZE_STEP } from '../../constants';
import { useT } from '../../lib/i18n';
import { Field } from '../../components/fields';
import { PageHeader } from '../../components/sections';
import { toast } from '../../stores/feedback';
import { paths } from '../../lib/paths';

const GB = SIZE_STEP * SIZE_STEP * SIZE_STEP;
const isPositiveInt = (v: string) => /^\d+$/.test(v.trim()) && Number(v) > 0;
const isCount = (v: string) => /^\d+$/.test(v.trim());

export default function ZcloudCreatePage() {
  const t = useT();
  const navigate = useNavigate();
  const [f, setF] = useState({ name: '', cpu: '4', memory: '8', disk: '100', gpuCount: '0', gpuModel: '', passthrough: false });
  const capacity = useAsync((signal) => fetchZcloudCapacity(signal), []);
  const hosts = capacity.data ?? [];
  // Does the asked size fit on one host (same rule as the server, GPUs by count and model)?
  const fits = (() => {
    if (![f.cpu, f.memory, f.disk].every(isPositiveInt) || !isCount(f.gpuCount)) return null;
    const gpus = Number(f.gpuCount);
    const models = f.gpuModel.split(',').map((m) => m.trim().toLowerCase()).filter(Boolean);
    const match = (name: string) => !models.length || models.some((m) => name.toLowerCase().includes(m));
    return hosts.some((h) => {
      if (h.cpu_cores < Number(f.cpu) || h.memory_bytes < Number(f.memory) * GB || h.disk_bytes < Number(f.disk) * GB) return false;
      if (!gpus) return true;
      const usable = h.gpus.filter((g) => match(g.name) && (!f.passthrough || g.passthrough));
      const byName = new Map<string, number>();
      for (const g of usable) byName.set(g.name, (byName.get(g.name) ?? 0) + g.count);
      return [...byName.values()].some((n) => n >= gpus);
    });
  })();
  const form = useForm<'name' | 'cpu' | 'memory' | 'disk' | 'gpuCount'>({
    validate: () => ({
      name: f.name.trim() ? null : 'field_required',
      cpu: isPositiveInt(f.cpu) ? null : 'must_be_positive',
      memory: isPositiveInt(f.memory) ? null : 'must_be_positive',
      disk: isPositiveInt(f.disk) ? null : 'must_be_positive',
      gpuCount: isCount(f.gpuCount) ? null : 'must_be_positive',
    }),
    action: async () => {
      const device = await createZcloud({
        name: f.name.trim(),
        cpu_cores: Number(f.cpu),
        memory_bytes: Number(f.memory) * GB,
        disk_bytes: Number(f.disk) * GB,
        gpu_count: Number(f.gpuCount),
        gpu_model: f.gpuModel.trim(),
        passthrough: f.passthrough,
        // On another owner's server: the hours held from the wallet (the server's default).
        hours: 24,
      });
      toast('success', t('zcloud_created'));
      navigate(paths.console.deviceDetails(device.id));
    },
  });
  return (
    <div className="page narrow">
      <PageHeader title={t('create_zcloud')} />
      <section className="card form-card" aria-label={t('free_capacity')}>
        <h2 className="field-label">{t('free_capacity')}</h2>
        {capacity.loading ? null : hosts.length ? (
          <ul className="plain-list">
            {hosts.map((h, i) => (
              <li key={i}>{t('capacity_host', { n: i + 1, res: hostFreeText(t, h) })}</li>
            ))}
          </ul>
        ) : (
          <p className="muted">{t('capacity_none')}</p>
        )}
      </section>
      <form className="card form-card" onSubmit={form.submit} noValidate>
        <Field label={t('name')} value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} error={form.error('name')} />
        <div className="form-row">
          <Field label={t('cpu_cores')} inputMode="numeric" value={f.cpu} onChange={(e) => setF({ ...f, cpu: e.target.value })} error={form.error('cpu')} />
          <Field label={t('memory_gb')} inputMode="numeric" value={f.memory} onChange={(e) => setF({ ...f, memory: e.target.value })} error={form.error('memory')} />
          <Field label={t('disk_gb')} inputMode="numeric" value={f.disk} onChange={(e) => setF({ ...f, disk: e.target.value })} error={form.error('disk')} />
        </div>
        <div className="form-row">
          <Field label={t('gpu_count')} inputMode="numeric" value={f.gpuCount} onChange={(e) => setF({ ...f, gpuCount: e.target.value })} error={form.error('gpuCount')} />
          <Field label={t('gpu_models')} value={f.gpuModel} onChange={(e) => setF({ ...f, gpuModel: e.target.value })} />
        </div>
        <label className="checkbox-row">
          <input type="checkbox" checked={f.passthrough} onChange={(e) => setF({ ...f, passthrough: e.target.checked })} />
          <span>{t('passthrough')}</span>
        </label>
        {fits !== null && !capacity.loading ? (
          <p className={fits ? 'capacity-note ok' : 'capacity-note bad'} role="status">
            {fits ? t('capacity_fits') : t('capacity_too_big')}
          </p>
        ) : null}
        <FormError form={form} />
        <SubmitButton form={form}>{t('create')}</SubmitButton>
      </form>
    </div>
  );
}
