// Labelled form fields: a text input, a password input with a show/hide button, a select of fixed
// choices. Each shows its error and its hint below, tied to the input for screen readers.
import { useEffect, useId, useRef, useState, type ChangeEvent, type InputHTMLAttributes, type ReactNode, type RefObject, type TextareaHTMLAttributes } from 'react';
import { useT } from '../lib/i18n';
import { Icon } from './Icon';

type FieldProps = { label: string; error?: string; hint?: string } & InputHTMLAttributes<HTMLInputElement>;

/** The label, the control and the error or hint below it; `control` gets the input's aria props. */
function FieldFrame({
  label,
  error,
  hint,
  control,
}: {
  label: string;
  error?: string;
  hint?: string;
  control: (id: string, aria: { 'aria-invalid'?: true; 'aria-describedby'?: string }) => ReactNode;
}) {
  const id = useId();
  // The hint (a rule such as the password's) stays visible next to an error: the error says what
  // is wrong, the rule what is wanted.
  const describedBy = [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={error ? 'field has-error' : 'field'}>
      <label htmlFor={id}>{label}</label>
      {control(id, { 'aria-invalid': error ? true : undefined, 'aria-describedby': describedBy })}
      {error ? (
        <p className="field-error" id={`${id}-error`} role="alert">
          {error}
        </p>
      ) : null}
      {hint && hint !== error ? (
        <p className="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/**
 * What a person typed into the server's markup before React attached: React leaves it in the
 * input when it hydrates but does not tell the form, whose state still holds the server's value,
 * so the next render would wipe it. It is handed to `onChange` once, after hydration.
 */
function useKeepTyped({ value, onChange }: InputHTMLAttributes<HTMLInputElement>): RefObject<HTMLInputElement | null> {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (el && onChange && typeof value === 'string' && el.value !== value) {
      onChange({ target: el, currentTarget: el } as ChangeEvent<HTMLInputElement>);
    }
    // Once, as the field mounts: later differences are React's own to settle.
  }, []);
  return ref;
}

export function Field({ label, error, hint, ...input }: FieldProps) {
  const ref = useKeepTyped(input);
  return <FieldFrame label={label} error={error} hint={hint} control={(id, aria) => <input id={id} ref={ref} {...aria} {...input} />} />;
}

/** A text of several lines (the same frame, error and hint as `Field`). */
export function TextAreaField({ label, error, hint, ...area }: { label: string; error?: string; hint?: string } & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <FieldFrame label={label} error={error} hint={hint} control={(id, aria) => <textarea id={id} rows={3} {...aria} {...area} />} />;
}

export function PasswordField({ label, error, hint, ...input }: FieldProps) {
  const t = useT();
  const [visible, setVisible] = useState(false);
  const ref = useKeepTyped(input);
  return (
    <FieldFrame
      label={label}
      error={error}
      hint={hint}
      control={(id, aria) => (
        <div className="input-with-button">
          <input id={id} ref={ref} type={visible ? 'text' : 'password'} {...aria} {...input} />
          <button
            type="button"
            className="icon-button small"
            aria-label={visible ? t('hide_password') : t('show_password')}
            aria-controls={id}
            aria-pressed={visible}
            onClick={() => setVisible((v) => !v)}
          >
            <Icon name={visible ? 'eyeOff' : 'eye'} size={16} />
          </button>
        </div>
      )}
    />
  );
}

/** A labelled select of fixed choices, each a value and its label. */
export function SelectField<V extends string>({
  id,
  label,
  value,
  options,
  onChange,
  hint,
}: {
  id: string;
  label: string;
  value: V;
  options: [V, string][];
  onChange: (value: V) => void;
  hint?: string;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as V)} aria-describedby={hint ? `${id}-hint` : undefined}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
      {hint ? (
        <p className="field-hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}
