// The device page's GPUs (issue 38): each GPU as the box reads it (index, name, VRAM, UUID,
// driver, CUDA, compute capability, MIG), how many are free, what the last verification found
// (figures, or the reason in words), Verify GPUs for the owner, and each GPU's live use. A box
// without GPUs shows none of it.
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { fetchDevice } from '../../api/devices';
import { verifyDevice, type DeviceMetrics, type GpuDetails, type GpuDevice } from '../../api/gpus';
import { GpuUseCharts, UuidCopy, VerifiedMark, seriesOf } from '../../components/devices/GpuCharts';
import { anyFailed, checkOf, checkReasonText, gbps, gpuTitle, useGpuT, type GpuT } from '../../components/devices/gpuText';
import { migText } from '../../components/devices/gpuMarks';
import { formatDateTime, formatSize } from '../../lib/format';
import { useAction } from '../../lib/useAction';
import { toast, toastError } from '../../stores/feedback';

/** How often a verification under way looks for its result, and for how long. */
export const VERIFY_POLL_MS = 3_000;
export const VERIFY_WAIT_MS = 60_000;

function Fact({ label, children, className }: { label: string; children: ReactNode; className?: string }) {
  return (
    <div className={className}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** What the last verification found of one GPU, in a sentence. */
function VerificationLine({ t, device, gpu }: { t: GpuT; device: GpuDevice; gpu: GpuDetails }) {
  const check = checkOf(device.verification, gpu.uuid);
  if (!check) return <p className="gpu-verification muted">{t('gpu_never_text')}</p>;
  const date = formatDateTime(device.verification!.at);
  if (check.ok) {
    return <p className="gpu-verification ok">{t('gpu_verified_text', { date, d2d: gbps(check.d2d_gbps), h2d: gbps(check.h2d_gbps) })}</p>;
  }
  return (
    <p className="gpu-verification bad" role="status">
      {t('gpu_failed_text', { date, reason: checkReasonText(t, check.reason) })}
    </p>
  );
}

function GpuCard({ t, device, gpu, position, metrics }: { t: GpuT; device: GpuDevice; gpu: GpuDetails; position: number; metrics: DeviceMetrics | undefined }) {
  const check = checkOf(device.verification, gpu.uuid);
  const series = seriesOf(metrics, gpu.uuid);
  const dash = (v: string | null | undefined) => v || '-';
  return (
    <article className="gpu-card" data-gpu={gpu.uuid ?? position} aria-label={`${gpuTitle(t, gpu, position)} ${gpu.name}`}>
      <header className="gpu-card-head">
        <h3>
          {gpuTitle(t, gpu, position)} · {gpu.name}
        </h3>
        <VerifiedMark state={!check ? 'never' : check.ok ? 'ok' : 'failed'} />
      </header>
      <dl className="facts gpu-facts">
        <Fact label={t('gpu_vram')}>{formatSize(gpu.vram)}</Fact>
        <Fact label={t('gpu_uuid')} className="gpu-uuid-fact">{gpu.uuid ? <UuidCopy uuid={gpu.uuid} /> : '-'}</Fact>
        <Fact label={t('gpu_driver')}>
          <span data-testid="gpu-driver">{dash(gpu.driver)}</span>
        </Fact>
        <Fact label={t('gpu_cuda')}>
          <span data-testid="gpu-cuda">{dash(gpu.cuda)}</span>
        </Fact>
        <Fact label={t('gpu_compute_capability')}>{dash(gpu.compute_capability)}</Fact>
        <Fact label={t('gpu_mig')}>{migText(t, gpu.mig)}</Fact>
        {gpu.passthrough ? <Fact label={t('passthrough')}>✓</Fact> : null}
      </dl>
      <VerificationLine t={t} device={device} gpu={gpu} />
      <GpuUseCharts series={series} vram={gpu.vram} beat={gpu.uuid ? device.metrics?.gpus?.find((u) => u.uuid.toLowerCase() === gpu.uuid!.toLowerCase()) : null} />
    </article>
  );
}

/**
 * Verify GPUs: asks the box to measure, then looks for the result (the verification's `at` moves)
 * every 3 s for up to a minute, saying "Measuring…" meanwhile.
 */
function useVerify(device: GpuDevice, onChanged: (d: GpuDevice) => void) {
  const t = useGpuT();
  const action = useAction({ onError: toastError });
  const [since, setSince] = useState<{ at: string | null; until: number } | null>(null);
  const measuring = since !== null;
  const at = device.verification?.at ?? null;
  const changed = useRef(onChanged);
  changed.current = onChanged;
  useEffect(() => {
    if (since && at !== since.at) {
      setSince(null);
      toast('success', t('gpu_verify_done'));
    }
  }, [at, since, t]);
  useEffect(() => {
    if (!since) return;
    const timer = window.setInterval(() => {
      if (Date.now() > since.until) {
        setSince(null);
        toast('warning', t('gpu_verify_waiting'));
        return;
      }
      fetchDevice(device.id)
        .then((d) => changed.current(d))
        .catch(() => {});
    }, VERIFY_POLL_MS);
    return () => window.clearInterval(timer);
  }, [since, device.id, t]);
  const start = () =>
    void action.run(async () => {
      const before = at;
      const d = await verifyDevice(device.id);
      onChanged(d);
      setSince({ at: before, until: Date.now() + VERIFY_WAIT_MS });
    });
  return { busy: action.busy || measuring, measuring, start };
}

export function DeviceGpus({ device, metrics, onChanged }: { device: GpuDevice; metrics: DeviceMetrics | undefined; onChanged: (d: GpuDevice) => void }) {
  const t = useGpuT();
  const verify = useVerify(device, onChanged);
  const gpus = device.spec.gpus;
  if (!gpus.length) return null;
  const free = device.gpus_free;
  return (
    <section className="card device-gpus" aria-labelledby="device-gpus-title">
      <div className="device-gpus-head">
        <h2 id="device-gpus-title">
          {t('gpus')}
          {typeof free === 'number' ? (
            <span className="muted device-gpus-free">
              {' · '}
              <span data-testid="gpus-free">{t('gpu_free_of', { free, total: gpus.length })}</span>
            </span>
          ) : null}
        </h2>
        <button type="button" className="button ghost small" disabled={verify.busy} onClick={verify.start} title={t('gpu_verify_hint')}>
          {verify.measuring ? t('gpu_measuring') : t('gpu_verify')}
        </button>
      </div>
      <p className="muted small" aria-live="polite">
        {verify.measuring ? t('gpu_measuring') : t('gpu_verify_hint')}
      </p>
      {anyFailed(device.verification) ? (
        <p className="form-error" role="alert" data-testid="gpu-not-offered">
          {t('gpu_not_offered')}
        </p>
      ) : null}
      <div className="gpu-list">
        {gpus.map((g, i) => (
          <GpuCard key={g.uuid ?? i} t={t} device={device} gpu={g} position={i} metrics={metrics} />
        ))}
      </div>
    </section>
  );
}
