import { describe, expect, it } from 'vitest';
import { translate, type MessageKey } from '../src/i18n';
import { niceMax } from '../src/components/DailyChart';
import { refLabel, runwayText, signedCoins, splitText } from '../src/components/wallet/walletText';

const en = (key: MessageKey, params?: Record<string, string | number>) => translate('en', key, params);
const zh = (key: MessageKey, params?: Record<string, string | number>) => translate('zh', key, params);

describe('wallet words', () => {
  it('writes the runway in its two largest units', () => {
    expect(runwayText(en, null)).toBe('Nothing running');
    expect(runwayText(en, 0)).toBe('Used up');
    expect(runwayText(en, 30)).toBe('1 min');
    expect(runwayText(en, 12 * 60 + 59)).toBe('12 min');
    expect(runwayText(en, 21_000)).toBe('5 h 50 min');
    expect(runwayText(en, 3 * 86_400 + 4 * 3600 + 59)).toBe('3 d 4 h');
    expect(runwayText(zh, 21_000)).toBe('5 小时 50 分钟');
  });

  it('signs amounts and names what an entry was', () => {
    expect(signedCoins(123_450)).toBe('+1,234.50');
    expect(signedCoins(-300)).toBe('-3.00');
    expect(refLabel(en, 'signup_bonus')).toBe('Signup bonus');
    expect(refLabel(zh, 'grant')).toBe('运营者发放');
    expect(refLabel(en, 'something_new')).toBe('something_new');
    expect(refLabel(zh, 'zcloud')).toBe('Z-CLOUD 云主机');
  });

  it("shows a provider's income as what was paid and the market's fee, and nothing for other entries", () => {
    expect(splitText(en, { gross: 98, fee: 9 })).toBe('0.98 paid, market fee 0.09');
    expect(splitText(zh, { gross: 1_234_50, fee: 0 })).toBe('对方支付 1,234.50，市场费 0.00');
    expect(splitText(en, { gross: null, fee: null })).toBeNull();
    expect(splitText(en, {})).toBeNull();
  });

  it('rounds the chart axis up to 1, 2 or 5 times a power of ten', () => {
    expect(niceMax(0)).toBe(100);
    expect(niceMax(1)).toBe(1);
    expect(niceMax(101)).toBe(200);
    expect(niceMax(123_450)).toBe(200_000);
    expect(niceMax(500)).toBe(500);
    expect(niceMax(501)).toBe(1000);
  });
});
