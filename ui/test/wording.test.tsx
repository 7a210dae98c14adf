// @vitest-environment happy-dom
// Wording: plural forms (one of a thing is singular in English) and one word per thing in the
// Chinese message tables.
import { describe, expect, it } from 'vitest';
import { en } from '../src/i18n/en';
import { zh } from '../src/i18n/zh';
import { translate } from '../src/i18n';
import { gpuEn, gpuZh } from '../src/components/devices/gpuText';
import { appsEn, appsZh } from '../src/pages/operator/appsMessages';
import { operatorEn, operatorZh } from '../src/pages/operator/messages';
import { describeResources } from '../src/lib/format';

describe('plural forms', () => {
  it('one of a thing is singular in English', () => {
    expect(translate('en', 'qualifying_now', { count: 1 })).toBe('1 online device qualifies now');
    expect(translate('en', 'qualifying_now', { count: 3 })).toBe('3 online devices qualify now');
    expect(translate('en', 'spec_cores', { n: 1 })).toBe('1 core');
    expect(translate('en', 'spec_cores', { n: 8 })).toBe('8 cores');
    expect(describeResources({ cpu_cores: 1, memory_bytes: 2 ** 30, disk_bytes: 2 ** 30, gpu_count: 0 })).toBe('1 Core CPU, 1 GB Memory, 1 GB SSD Disk, No GPU');
    expect(describeResources({ cpu_cores: 2, memory_bytes: 2 ** 30, disk_bytes: 2 ** 30, gpu_count: 1 })).toMatch(/^2 Cores CPU, /);
    expect(translate('zh', 'qualifying_now', { count: 1 })).toBe('当前有 1 台在线设备满足要求');
  });

  it('every English message counting things has its form for one', () => {
    // Counts that are never one: the wallet chart's days (WALLET_CHART_DAYS), a map cluster (two
    // or more devices), offers (offers_one says "1 offer").
    const neverOne = new Set(['wallet_chart', 'wallet_chart_label', 'wallet_chart_empty', 'devices_here', 'offers_n']);
    const tables: Record<string, string>[] = [en, gpuEn, appsEn, operatorEn];
    const missing: string[] = [];
    for (const table of tables) {
      for (const [key, text] of Object.entries(table)) {
        if (key.endsWith('_one') || neverOne.has(key)) continue;
        if (/\{(count|n)\} (?:[a-z-]+ )?[a-z]+s\b/.test(text) && !table[`${key}_one`]) missing.push(`${key}: ${text}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('one word per thing', () => {
  // Words for the same thing: a table uses the first of each group, never another.
  const SAME_THING: [string, string[]][] = [['GPU', ['显卡']]];
  it('the Chinese tables name each thing one way', () => {
    const tables: Record<string, string>[] = [zh, gpuZh, appsZh, operatorZh];
    const found: string[] = [];
    for (const table of tables) {
      for (const [key, text] of Object.entries(table)) {
        for (const [word, others] of SAME_THING) {
          for (const other of others) if (text.includes(other)) found.push(`${key}: ${other} (say ${word})`);
        }
      }
    }
    expect(found).toEqual([]);
    // The two ways of saying "no GPU" on one page (the market's facts and its offers) are one.
    expect(zh.offer_no_gpu).toBe(zh.no_gpu);
  });
});
