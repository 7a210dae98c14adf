// Pieces the company pages share: titled sections and form cards, loaded lists with their
// loading/empty/error states, tables, submit and confirm handling.
import { useState, type FormEvent, type ReactNode } from 'react';
import { errorText } from '../../api/client';
import type { ListPage } from '../../api/types';
import type { AsyncState } from '../../lib/useAsync';
import { useT } from '../../lib/i18n';
import { EmptyState, ErrorNote, Field, SkeletonLines } from '../../components/ui';
import { toast } from '../../stores/feedback';
import { validateCompanyName } from '../../lib/validation';

/** Runs `work`, showing its failure as an error toast. */
export async function toastFailure(work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (err) {
    toast('error', errorText(err));
  }
}

/**
 * A form's submit handler: `validate` returns the error to show (nothing when the input is fine),
 * then `action` runs; its failure is shown as the form's error.
 */
export function useSubmit(validate: () => string | undefined, action: () => Promise<void>) {
  const [error, setError] = useState<string | undefined>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const problem = validate();
    setError(problem);
    if (problem) return;
    try {
      await action();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return { error, submit };
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

/** A section headed by an h2 that labels it. */
export function Section({ id, title, className, children }: { id: string; title: string; className?: string; children: ReactNode }) {
  return (
    <section className={className} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

/** A card form headed by an h2 that labels it, its fields, then the submit button. */
export function FormCard({
  id,
  title,
  submitLabel,
  onSubmit,
  children,
}: {
  id: string;
  title: string;
  submitLabel: string;
  onSubmit: (e: FormEvent) => void;
  children: ReactNode;
}) {
  return (
    <form className="card form-card" onSubmit={onSubmit} noValidate aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
      <button type="submit" className="button primary">
        {submitLabel}
      </button>
    </form>
  );
}

/** A form with the company name field (create, rename): `save` gets the trimmed, valid name. */
export function CompanyNameForm({
  id,
  title,
  submitLabel,
  initial = '',
  save,
}: {
  id: string;
  title: string;
  submitLabel: string;
  initial?: string;
  save: (name: string) => Promise<void>;
}) {
  const t = useT();
  const [name, setName] = useState(initial);
  const { error, submit } = useSubmit(
    () => {
      const key = validateCompanyName(name);
      return key ? t(key) : undefined;
    },
    () => save(name.trim()),
  );
  return (
    <FormCard id={id} title={title} submitLabel={submitLabel} onSubmit={submit}>
      <Field label={t('company_name')} value={name} onChange={(e) => setName(e.target.value)} error={error} maxLength={50} />
    </FormCard>
  );
}

/** A labelled select of fixed choices, each a value and its label. */
export function SelectField<V extends string>({
  id,
  label,
  value,
  options,
  onChange,
}: {
  id: string;
  label: string;
  value: V;
  options: [V, string][];
  onChange: (value: V) => void;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as V)}>
        {options.map(([v, text]) => (
          <option key={v} value={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A loaded list: its error (with retry), a skeleton while loading, the items, or the empty state. */
export function AsyncItems<T>({
  state,
  emptyIcon,
  emptyTitle,
  children,
}: {
  state: AsyncState<ListPage<T>>;
  emptyIcon: string;
  emptyTitle: string;
  children: (items: T[]) => ReactNode;
}) {
  const items = state.data?.items ?? [];
  return (
    <>
      {state.error ? <ErrorNote text={state.error} onRetry={state.reload} /> : null}
      {state.loading ? (
        <SkeletonLines />
      ) : items.length ? (
        children(items)
      ) : !state.error ? (
        <EmptyState icon={emptyIcon} title={emptyTitle} />
      ) : null}
    </>
  );
}

/**
 * A table of rows with one action column last, labelled for screen readers only. A `false` column
 * is left out (its cells must be left out of the rows too).
 */
export function ActionTable({ columns, actionLabel, children }: { columns: (string | false)[]; actionLabel: string; children: ReactNode }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            {columns.map((c, i) =>
              c === false ? null : (
                <th key={i} scope="col">
                  {c}
                </th>
              ),
            )}
            <th scope="col">
              <span className="visually-hidden">{actionLabel}</span>
            </th>
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
