import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { BASE_Z_INDEX } from '../constants';
import { useT } from '../lib/i18n';
import { toastFailure } from '../stores/feedback';
import { Icon } from './Icon';

/**
 * A modal dialog: focus moves in, Escape closes, focus returns to the opener. Rendered into
 * document.body (a portal), so no ancestor (the header's backdrop filter) can clip or move it;
 * centred, and scrollable when taller than the window. Only rendered while open (client only).
 */
export function Dialog({
  open,
  title,
  onClose,
  children,
  footer,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ReactNode;
  footer?: ReactNode;
}) {
  const t = useT();
  const titleId = useId();
  const panel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const opener = document.activeElement as HTMLElement | null;
    const first = panel.current?.querySelector<HTMLElement>('input, select, textarea, button:not(.dialog-close)');
    (first ?? panel.current)?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      opener?.focus?.();
    };
  }, [open, onClose]);
  if (!open || typeof document === 'undefined') return null;
  return createPortal(
    <div className="dialog-backdrop" style={{ zIndex: BASE_Z_INDEX + 1 }} onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby={titleId} ref={panel} tabIndex={-1}>
        <header className="dialog-header">
          <h2 id={titleId}>{title}</h2>
          <button type="button" className="icon-button dialog-close" aria-label={t('close')} onClick={onClose}>
            <Icon name="close" size={18} />
          </button>
        </header>
        <div className="dialog-body">{children}</div>
        {footer ? <footer className="dialog-footer">{footer}</footer> : null}
      </div>
    </div>,
    document.body,
  );
}

/** A yes/no confirmation built on Dialog. */
export function ConfirmDialog({
  open,
  title,
  text,
  confirmLabel,
  danger,
  busy,
  onConfirm,
  onClose,
}: {
  open: boolean;
  title: string;
  text: string;
  confirmLabel?: string;
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onClose: () => void;
}) {
  const t = useT();
  return (
    <Dialog
      open={open}
      title={title}
      onClose={onClose}
      footer={
        <>
          <button type="button" className="button ghost" onClick={onClose}>
            {t('cancel')}
          </button>
          <button type="button" className={danger ? 'button danger' : 'button primary'} disabled={busy} onClick={onConfirm}>
            {confirmLabel ?? t('confirm')}
          </button>
        </>
      }
    >
      <p>{text}</p>
    </Dialog>
  );
}

/**
 * A danger confirmation about one subject (a member to remove, a company to leave): `ask` opens the
 * dialog, confirming closes it and runs `action`, whose failure is toasted. Spread `dialog` into
 * a ConfirmDialog.
 */
export function useConfirm<T = true>(action: (subject: T) => Promise<void>) {
  const [subject, setSubject] = useState<T | null>(null);
  const confirm = async () => {
    const s = subject;
    setSubject(null);
    if (s === null) return;
    await toastFailure(() => action(s));
  };
  return {
    subject,
    ask: (s: T) => setSubject(() => s),
    dialog: { open: subject !== null, danger: true, onConfirm: () => void confirm(), onClose: () => setSubject(null) },
  };
}
