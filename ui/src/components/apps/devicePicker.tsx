// The devices an app can go on, each with how it fits (free capacity, what is short, or why it
// cannot take it) and its GPUs (how many free, CUDA, verified): the market's Install and Rent
// dialogs and the Restore of a snapshot (pages/apps) pick from it.
import type { ReactNode } from 'react';
import type { OfferFit } from '../../api/gpus';
import type { Gap } from '../../api/types';
import { offerGpuMarks } from '../devices/gpuMarks';
import type { AsyncState } from '../../lib/useAsync';
import { useT, type TFunction } from '../../lib/i18n';
import type { MessageKey } from '../../i18n';
import { formatSize } from '../../lib/format';
import { ErrorNote, SkeletonLines } from '../placeholders';

const REASONS: Record<string, MessageKey> = {
  offline: 'fit_offline',
  installed: 'fit_installed',
  no_gpu_for_lite_app: 'fit_no_gpu',
  sharing_mode: 'fit_sharing_mode',
  no_free_gpu: 'fit_no_free_gpu',
  cuda_too_old: 'fit_cuda_too_old',
  gpu_failed_check: 'fit_gpu_failed_check',
  no_gpu_runtime: 'fit_no_gpu_runtime',
};

/** A gap's figure: bytes as a size, a CUDA version as sent. */
function amount(field: string, v: number | string | boolean | null): string {
  if (v === null) return '-';
  return field.endsWith('_bytes') && typeof v === 'number' ? formatSize(v) : String(v);
}

const GAP_KEYS: Record<string, MessageKey> = {
  cpu_cores: 'gap_cpu',
  memory_bytes: 'gap_memory',
  disk_bytes: 'gap_disk',
  gpu_count: 'gap_gpu',
  cuda: 'gap_cuda',
};

/** What a device lacks, in words ("Memory: needs 2.00 GB, 1.00 GB free · …"). */
export const gapsText = (t: TFunction, gaps: Gap[]) =>
  gaps.map((g) => (GAP_KEYS[g.field] ? t(GAP_KEYS[g.field], { need: amount(g.field, g.need), have: amount(g.field, g.have) }) : `${g.field}: ${amount(g.field, g.need)} / ${amount(g.field, g.have)}`)).join(' · ');

export function fitText(t: TFunction, f: OfferFit): string {
  if (f.fits) {
    return t('fit_ok', { cpu: f.free.cpu_cores, memory: formatSize(f.free.memory_bytes), gpu: f.free.gpu_count });
  }
  if (f.reason === 'resources' || (f.reason === 'cuda_too_old' && f.gaps.length)) return gapsText(t, f.gaps);
  if (!f.reason) return t('fit_offline');
  const key = REASONS[f.reason];
  return key ? t(key) : t('fit_other', { reason: f.reason });
}

/** An offer's GPUs: free of all, CUDA, verified (a failed verification in the danger colour). */
function OfferGpuMarks({ f }: { f: OfferFit }) {
  const t = useT();
  const marks = offerGpuMarks(t, f);
  if (!marks.length) return null;
  const tone = f.verified === true ? 'verified' : f.verified === false ? 'failed' : '';
  return (
    <span className="device-choice-gpus" data-testid="offer-gpus">
      {marks.map((m, i) => (
        <span key={i} className={i === marks.length - 1 && typeof f.verified === 'boolean' ? tone : undefined}>
          {i ? ' · ' : ''}
          {m}
        </span>
      ))}
    </span>
  );
}

/** The devices an app can go on, each with how it fits; the unfit ones cannot be picked. */
export function DevicePicker({
  state,
  empty,
  legend,
  name,
  picked,
  onPick,
  label,
}: {
  state: AsyncState<OfferFit[]>;
  empty: ReactNode;
  legend: string;
  name: string;
  picked: string | undefined;
  onPick: (deviceId: string) => void;
  label: (f: OfferFit) => ReactNode;
}) {
  const t = useT();
  const list = state.data ?? [];
  return (
    <>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines lines={3} />
      ) : !list.length && !state.error ? (
        <p className="muted">{empty}</p>
      ) : (
        <fieldset className="device-picker">
          <legend>{legend}</legend>
          {list.map((f) => (
            <label key={f.device_id} className={`device-choice ${f.fits ? '' : 'unfit'}`} data-device={f.device_id}>
              <input type="radio" name={name} value={f.device_id} disabled={!f.fits} checked={picked === f.device_id} onChange={() => onPick(f.device_id)} />
              <span className="device-choice-name">
                {label(f)}
                <OfferGpuMarks f={f} />
              </span>
              <span className={f.fits ? 'fit-ok' : 'fit-bad'}>{fitText(t, f)}</span>
            </label>
          ))}
        </fieldset>
      )}
    </>
  );
}
