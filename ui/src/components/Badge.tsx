import { BADGE_MAX } from '../constants';

/** "99+" above BADGE_MAX (docs/product.md §9). */
export function badgeText(count: number, max: number = BADGE_MAX): string {
  return count > max ? `${max}+` : String(count);
}

export function Badge({ count, label, max = BADGE_MAX }: { count: number; label?: string; max?: number }) {
  if (!count || count <= 0) return null;
  return (
    <span className="badge" aria-label={label ? `${label}: ${count}` : undefined}>
      {badgeText(count, max)}
    </span>
  );
}
