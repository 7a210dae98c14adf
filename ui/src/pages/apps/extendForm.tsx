// A rental's Extend (issue 39): hours (1-720) and what the wallet will hold for them, then the
// rental ends that much later. Opened from the ending notice (`&extend=1`: the input has the focus).
// One Idempotency-Key per asked extension: a retried request extends once.
import { useRef, useState } from 'react';
import { extendRental } from '../../api/apps';
import type { Installation } from '../../api/types';
import { useT } from '../../lib/i18n';
import { formatCoins, formatDateTime } from '../../lib/format';
import { FormError, SubmitButton, useForm } from '../../components/form';
import { Field } from '../../components/fields';

const MAX_HOURS = 720;
const newKey = () => `extend-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

export function ExtendForm({ inst, focus, onExtended }: { inst: Installation; focus: boolean; onExtended: (next: Installation) => void }) {
  const t = useT();
  const [hours, setHours] = useState('1');
  const key = useRef({ hours: '', key: newKey() });
  const n = Number(hours);
  const ok = Number.isInteger(n) && n >= 1 && n <= MAX_HOURS;
  const price = inst.rental?.price_per_hour ?? 0;
  const form = useForm<'hours'>({
    validate: () => ({ hours: ok ? null : 'extend_hours_invalid' }),
    action: async () => {
      if (key.current.hours !== hours) key.current = { hours, key: newKey() };
      const next = await extendRental(inst.id, n, key.current.key);
      key.current = { hours: '', key: newKey() };
      onExtended(next);
    },
    serverFields: { hours: 'hours' },
  });
  return (
    <form className="extend-form" onSubmit={form.submit} noValidate data-testid="extend-form">
      <Field
        label={t('extend_hours')}
        error={form.error('hours')}
        type="number"
        min={1}
        max={MAX_HOURS}
        step={1}
        value={hours}
        autoFocus={focus}
        data-testid="extend-hours"
        onChange={(e) => setHours(e.target.value)}
      />
      {ok ? (
        <p className="muted" data-testid="extend-note">
          {t('extend_note', { total: formatCoins(price * n), hours: n, ends: formatDateTime(new Date(Date.parse(inst.rental?.ends_at ?? '') + n * 3_600_000).toISOString()) })}
        </p>
      ) : null}
      <FormError form={form} />
      <SubmitButton form={form}>{t('extend')}</SubmitButton>
    </form>
  );
}
