// The market's filter choices and the words of an app's resource requirements.
import type { App } from '../../api/types';
import type { ResourceWords } from '../../lib/format';
import type { TFunction } from '../../lib/i18n';

export const CATEGORIES = ['top_picks', 'AI', 'Metaverse', 'Game', 'Work', 'Home', 'Others', 'Z-CLOUD'] as const;
export const DISPLAY_TYPES = ['Desktop', 'Lite App', 'NAS', 'AI compute', 'Server', 'Remote desktop', 'AI server', 'Z-SERVER'] as const;
export const TIERS = ['high', 'standard', 'basic'] as const;

// The lists are the server's enums exactly (ui/src/api/schema.d.ts): a value added or renamed on
// one side only fails `tsc`.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const listsMatchTheSchema: [
  Same<Exclude<(typeof CATEGORIES)[number], 'top_picks'>, App['category']>,
  Same<(typeof DISPLAY_TYPES)[number], App['display_type']>,
  Same<(typeof TIERS)[number], App['tier']>,
] = [true, true, true];
void listsMatchTheSchema;

export function resourceWords(t: TFunction): ResourceWords {
  return { core: t('core_cpu'), cores: t('cores_cpu'), memory: t('gb_memory'), disk: t('gb_ssd_disk'), noGpu: t('no_gpu') };
}
