// The market's filter choices and the words of an app's resource requirements.
import type { ResourceWords } from '../../lib/format';
import type { TFunction } from '../../lib/i18n';

export const CATEGORIES = ['top_picks', 'AI', 'Metaverse', 'Game', 'Work', 'Home', 'Others', 'Z-CLOUD'] as const;
export const DISPLAY_TYPES = ['Desktop', 'Lite App', 'NAS', 'AI compute', 'Server', 'Remote desktop', 'AI server', 'Z-SERVER'] as const;
export const TIERS = ['high', 'standard', 'basic'] as const;

export function resourceWords(t: TFunction): ResourceWords {
  return { cores: t('cores_cpu'), memory: t('gb_memory'), disk: t('gb_ssd_disk'), noGpu: t('no_gpu') };
}
