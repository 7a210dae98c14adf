// What the public and market pages say of a box's GPUs (issue 38): MIG on or off, verified or
// not, an offer's marks (free GPUs, CUDA, verification). Their words are in the main tables
// (i18n/gpus.*.ts); the console's GPU words are in gpuText.ts.
import type { OfferFit } from '../../api/gpus';
import type { TFunction } from '../../lib/i18n';

/** "On" / "Off" / "-" (an older agent does not say). */
export function migText(t: TFunction, mig: boolean | null | undefined): string {
  if (mig === null || mig === undefined) return '-';
  return mig ? t('gpu_mig_on') : t('gpu_mig_off');
}

/** Verified (true), failed its last verification (false), never verified (null); nothing when not said. */
export function verifiedWord(t: TFunction, verified: boolean | null | undefined): string | null {
  if (verified === true) return t('gpu_verified');
  if (verified === false) return t('gpu_failed');
  if (verified === null) return t('gpu_unverified');
  return null;
}

/** What an offer says of its box's GPUs: free of all, CUDA, verified or not. Empty for a box without GPUs. */
export function offerGpuMarks(t: TFunction, f: Pick<OfferFit, 'gpus' | 'gpus_free' | 'cuda' | 'verified'>): string[] {
  if (!f.gpus.length) return [];
  const marks: string[] = [];
  if (typeof f.gpus_free === 'number') marks.push(t('offer_gpus_free', { free: f.gpus_free, total: f.gpus.length }));
  if (f.cuda) marks.push(t('offer_cuda', { cuda: f.cuda }));
  const v = verifiedWord(t, f.verified);
  if (v) marks.push(v);
  return marks;
}
