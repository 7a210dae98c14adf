// The one form abstraction: validation messages per field, the server's error, the busy state, the
// form-error block and a submit guard (one action at a time: lib/useAction). Every form of the UI uses it.
import { useCallback, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { ApiError } from '../lib/http';
import { useT } from '../lib/i18n';
import { useAction } from '../lib/useAction';
import type { MessageKey } from '../i18n';

/** A message key per field; `form` is shown in the form-error block. Empty values mean valid. */
export type Problems<K extends string> = Partial<Record<K | 'form', MessageKey | null | undefined | false>>;

export interface FormOptions<K extends string> {
  /** Checks the input before the action runs (docs/product.md §5 messages). */
  validate?: () => Problems<K>;
  /** Runs once the input is valid; what it throws is the server's error. */
  action: () => Promise<void>;
  /** The server's error shows under this field instead of in the form-error block. */
  serverErrorField?: K;
  /**
   * The form's field for the server's `data.field` (400 answers name the offending field): the
   * server's message then shows under that field rather than in the form-error block.
   */
  serverFields?: Partial<Record<string, K>>;
}

export interface Form<K extends string> {
  busy: boolean;
  /** The error under a field: its validation message, or the server's error routed to it. */
  error: (field: K) => string | undefined;
  /** The text of the form-error block, if any. */
  formError: string | null;
  /** The form's onSubmit: validates, then runs the action unless one is running already. */
  submit: (e?: FormEvent) => void;
  /** Runs another action (no validation) with the same guard and error handling. */
  run: (action: () => Promise<void>) => Promise<void>;
  /** Forgets every error (a dialog opened again). */
  reset: () => void;
}

export function useForm<K extends string = never>(options: FormOptions<K>): Form<K> {
  const t = useT();
  const [problems, setProblems] = useState<Problems<K>>({});
  const action = useAction();
  const { busy, run: runAction, reset: forget } = action;
  const latest = useRef(options);
  latest.current = options;

  const reset = useCallback(() => {
    setProblems({});
    forget();
  }, [forget]);

  const run = useCallback(
    (work: () => Promise<void>) =>
      runAction(async () => {
        setProblems({});
        await work();
      }),
    [runAction],
  );

  const submit = useCallback(
    (e?: FormEvent) => {
      e?.preventDefault();
      if (busy) return;
      const found = latest.current.validate?.() ?? {};
      if (Object.values(found).some(Boolean)) {
        // New problems replace the last answer: no old error stays next to the new ones.
        setProblems(found);
        forget();
        return;
      }
      void run(() => latest.current.action());
    },
    [busy, run, forget],
  );

  const { serverErrorField, serverFields } = options;
  const message = (key: Problems<K>[K] | undefined) => (key ? t(key) : undefined);
  const serverField = (action.error !== null ? serverFields?.[serverFieldOf(action.cause)] : undefined) ?? serverErrorField;
  return {
    busy,
    error: (field) => message(problems[field]) ?? (action.error !== null && field === serverField ? action.error : undefined),
    formError: message(problems.form) ?? (action.error !== null && serverField === undefined ? action.error : null),
    submit,
    run,
    reset,
  };
}

/** The form-error block (the server's answer, or a problem of the whole form). */
export function FormError({ form }: { form: { formError: string | null } }) {
  return <ErrorBlock text={form.formError} />;
}

/** The same block for a button's action outside a form (lib/useAction): the text of its last failure. */
export function ActionError({ action }: { action: { error: string | null } }) {
  return <ErrorBlock text={action.error} />;
}

function ErrorBlock({ text }: { text: string | null }) {
  return text ? (
    <p className="form-error" role="alert">
      {text}
    </p>
  ) : null;
}

/** The submit button, disabled while the form's action runs. */
export function SubmitButton({ form, className = 'button primary', children }: { form: { busy: boolean }; className?: string; children: ReactNode }) {
  return (
    <button type="submit" className={className} disabled={form.busy}>
      {children}
    </button>
  );
}

/** A card form headed by an h2 that labels it, its fields, the form-error block, then the submit button. */
export function FormCard({
  id,
  title,
  submitLabel,
  form,
  children,
}: {
  id: string;
  title: string;
  submitLabel: string;
  form: { submit: (e?: FormEvent) => void; busy: boolean; formError: string | null };
  children: ReactNode;
}) {
  return (
    <form className="card form-card" onSubmit={form.submit} noValidate aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
      <FormError form={form} />
      <SubmitButton form={form}>{submitLabel}</SubmitButton>
    </form>
  );
}

/** The `data.field` of a 400 answer, or '' (the API names the offending field there). */
function serverFieldOf(err: unknown): string {
  if (!(err instanceof ApiError) || !err.data || typeof err.data !== 'object') return '';
  const field = (err.data as { field?: unknown }).field;
  return typeof field === 'string' ? field : '';
}
