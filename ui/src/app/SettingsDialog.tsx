import { useCallback } from 'react';
import { Dialog } from '../components/Dialog';
import { useSettings } from '../stores/settings';
import { useT } from '../lib/i18n';

/** docs/product.md §3 global settings, editable by the user and persisted in localStorage. */
export function SettingsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const t = useT();
  const s = useSettings();
  const close = useCallback(() => onClose(), [onClose]);
  const toggle = (key: 'dark' | 'grey' | 'weak' | 'collapse' | 'tabs', label: string) => (
    <label className="switch-row">
      <span>{label}</span>
      <input type="checkbox" role="switch" checked={s[key]} onChange={(e) => s.set({ [key]: e.target.checked })} />
    </label>
  );
  return (
    <Dialog
      open={open}
      title={t('settings')}
      onClose={close}
      footer={
        <button type="button" className="button ghost" onClick={() => s.reset()}>
          {t('reset_settings')}
        </button>
      }
    >
      <fieldset className="settings-group">
        <legend>{t('settings_layout')}</legend>
        <label className="radio-row">
          <input type="radio" name="layout" checked={s.layout === 'vertical'} onChange={() => s.set({ layout: 'vertical' })} />
          {t('layout_vertical')}
        </label>
        <label className="radio-row">
          <input type="radio" name="layout" checked={s.layout === 'horizontal'} onChange={() => s.set({ layout: 'horizontal' })} />
          {t('layout_horizontal')}
        </label>
      </fieldset>
      <label className="switch-row">
        <span>{t('theme_color')}</span>
        <input type="color" value={s.themeColor} onChange={(e) => s.set({ themeColor: e.target.value })} />
      </label>
      {toggle('dark', t('dark_mode'))}
      {toggle('grey', t('grey_mode'))}
      {toggle('weak', t('weak_mode'))}
      {toggle('collapse', t('collapse_sidebar'))}
      {toggle('tabs', t('show_tabs'))}
    </Dialog>
  );
}
