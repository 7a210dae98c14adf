// The words of snapshots (i18n/snapshots.*.ts), loaded with the apps pages rather than in the first
// load, and a snapshot in words: its kind, where it is kept, its state.
import { useCallback } from 'react';
import type { Snapshot } from '../../api/types';
import { translate, type Lang, type MessageKey } from '../../i18n';
import { enSnapshots } from '../../i18n/snapshots.en';
import { zhSnapshots } from '../../i18n/snapshots.zh';
import { useLang } from '../../lib/i18n';

export type SnapKey = keyof typeof enSnapshots;
/** `t` of the snapshot words: its own, else the app's. */
export type SnapT = (key: SnapKey | MessageKey, params?: Record<string, string | number>) => string;

/** A snapshot word (or an app word) in `lang`, `{name}` placeholders filled. */
export function snapTranslate(lang: Lang, key: SnapKey | MessageKey, params?: Record<string, string | number>): string {
  const own = (lang === 'zh' ? zhSnapshots : enSnapshots) as Record<string, string>;
  if (!(key in own)) return translate(lang, key, params);
  let text = own[key];
  for (const name of Object.keys(params ?? {})) text = text.split(`{${name}}`).join(String(params![name]));
  return text;
}

export function useSnapT(): SnapT {
  const lang = useLang();
  return useCallback((key, params) => snapTranslate(lang, key, params), [lang]);
}

/** What a snapshot is doing now: uploading and restoring say so over its status. */
export type SnapState = 'creating' | 'ready' | 'failed' | 'uploading' | 'restoring';

export function snapState(s: Pick<Snapshot, 'status' | 'uploading' | 'restoring'>): SnapState {
  if (s.status !== 'ready') return s.status;
  if (s.uploading) return 'uploading';
  if (s.restoring) return 'restoring';
  return 'ready';
}

/** While creating, being kept on the market or restored, the list is read again every second. */
export const isSnapBusy = (s: Pick<Snapshot, 'status' | 'uploading' | 'restoring'>) => snapState(s) !== 'ready' && snapState(s) !== 'failed';

const KINDS: Record<Snapshot['kind'], SnapKey> = { manual: 'snap_kind_manual', backup: 'snap_kind_backup', ended: 'snap_kind_ended' };

/** Taken by hand, a daily backup, kept after a rental ended (an unknown kind: as sent). */
export const snapKindText = (t: SnapT, kind: string) => (kind in KINDS ? t(KINDS[kind as Snapshot['kind']]) : kind);

/** On the box, on the market, or both. */
export function snapWhereText(t: SnapT, s: Pick<Snapshot, 'where' | 'on_box'>): string {
  if (s.where === 'market') return t(s.on_box ? 'snap_where_both' : 'snap_where_market');
  return t('snap_where_box');
}

export const snapStateText = (t: SnapT, state: SnapState) => t(`snap_status_${state}`);
