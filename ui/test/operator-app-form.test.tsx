// @vitest-environment happy-dom
// The operator's app form names the category, type and tier choices in the reader's language, as
// the market does, while the values it sends stay the wire values.
import { describe, expect, it } from 'vitest';
import AppForm from '../src/pages/operator/AppForm';
import { show, signedInEachTest } from './connect-render';

signedInEachTest();

const options = (el: HTMLElement, id: string) => [...el.querySelectorAll<HTMLOptionElement>(`#${id} option`)].map((o) => [o.value, o.textContent]);

const CASES = {
  zh: { tiers: ['高性能', '标准', '基础'], category: ['Work', '办公'], type: ['AI server', 'AI 服务器'] },
  en: { tiers: ['High', 'Standard', 'Basic'], category: ['Work', 'Work'], type: ['Lite App', 'Lite App'] },
} as const;

describe('operator app form', () => {
  for (const [lang, want] of Object.entries(CASES) as [keyof typeof CASES, (typeof CASES)[keyof typeof CASES]][]) {
    it(`names category, type and tier in ${lang}, sending the wire values`, async () => {
      const el = await show(<AppForm app={null} onBack={() => {}} onSaved={() => {}} />, lang);
      expect(options(el, 'app-tier')).toEqual(['high', 'standard', 'basic'].map((v, i) => [v, want.tiers[i]]));
      expect(options(el, 'app-category')).toContainEqual([...want.category]);
      expect(options(el, 'app-display-type')).toContainEqual([...want.type]);
      expect(el.querySelector<HTMLSelectElement>('#app-tier')!.value).toBe('basic');
    });
  }
});
