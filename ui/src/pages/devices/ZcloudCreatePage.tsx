import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { createZcloud, fetchZcloudCapacity } from '../../api/devices';
import { useAsync } from '../../lib/useAsync';
import { hostFreeText } from './shared';
import { errorText } from '../../api/client';
import { SIZE_STEP } from '../../constants';
import { useT } from '../../lib/i18n';
import { Field, PageHeader } from '../../components/ui';
import { toast } from '../../stores/feedback';
import { paths } from '../../lib/paths';

const GB = SIZE_STEP * SIZE_STEP * SIZE_STEP;
const isPositiveInt = (v: string) => /^\d+$/.test(v.trim()) && Number(v) > 0;
const isCount = (v: string) => /^\d+$/.test(v.trim());

export default function ZcloudCreatePage() {
  const t = useT();
  const navigate = useNavigate();
  const [f, setF] = useState({ name: '', cpu: '4', memory: '8', disk: '100', gpuCount: '0', gpuModel: '', passthrough: false });
  const [errors, setErrors] = useState<Record<string, string | undefined>>({});
  const [serverError, setServerError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
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
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const next = {
      name: f.name.trim() ? undefined : t('field_required'),
      cpu: isPositiveInt(f.cpu) ? undefined : t('must_be_positive'),
      memory: isPositiveInt(f.memory) ? undefined : t('must_be_positive'),
      disk: isPositiveInt(f.disk) ? undefined : t('must_be_positive'),
      gpuCount: isCount(f.gpuCount) ? undefined : t('must_be_positive'),
    };
    setErrors(next);
    if (Object.values(next).some(Boolean)) return;
    setBusy(true);
    setServerError(null);
    try {
      const device = await createZcloud({
        name: f.name.trim(),
        cpu_cores: Number(f.cpu),
        memory_bytes: Number(f.memory) * GB,
        disk_bytes: Number(f.disk) * GB,
        gpu_count: Number(f.gpuCount),
        gpu_model: f.gpuModel.trim(),
        passthrough: f.passthrough,
      });
      toast('success', t('zcloud_created'));
      navigate(paths.console.deviceDetails(device.id));
    } catch (err) {
      setServerError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
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
      <form className="card form-card" onSubmit={submit} noValidate>
        <Field label={t('name')} value={f.name} onChange={(e) => setF({ ...f, name: e.target.value })} error={errors.name} />
        <div className="form-row">
          <Field label={t('cpu_cores')} inputMode="numeric" value={f.cpu} onChange={(e) => setF({ ...f, cpu: e.target.value })} error={errors.cpu} />
          <Field label={t('memory_gb')} inputMode="numeric" value={f.memory} onChange={(e) => setF({ ...f, memory: e.target.value })} error={errors.memory} />
          <Field label={t('disk_gb')} inputMode="numeric" value={f.disk} onChange={(e) => setF({ ...f, disk: e.target.value })} error={errors.disk} />
        </div>
        <div className="form-row">
          <Field label={t('gpu_count')} inputMode="numeric" value={f.gpuCount} onChange={(e) => setF({ ...f, gpuCount: e.target.value })} error={errors.gpuCount} />
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
        {serverError ? (
          <p className="form-error" role="alert">
            {serverError}
          </p>
        ) : null}
        <button type="submit" className="button primary" disabled={busy}>
          {t('create')}
        </button>
      </form>
    </div>
  );
}
