import { describe, expect, it } from 'vitest';
import { translate, type MessageKey } from '../src/i18n';
import { gapText } from '../src/pages/ondemand/orders';

const en = (key: MessageKey, params?: Record<string, string | number>) => translate('en', key, params);
const zh = (key: MessageKey, params?: Record<string, string | number>) => translate('zh', key, params);

describe('the matcher’s gaps in words', () => {
  it('says each unmet requirement in English', () => {
    expect(gapText(en, { field: 'gpu_count', need: 4, have: 2 })).toBe('Needs 4 free GPUs, it has 2');
    expect(gapText(en, { field: 'gpu_models', need: 'A100, 4090', have: 'RTX 3060' })).toBe('Needs GPU models A100, 4090, it has RTX 3060');
    expect(gapText(en, { field: 'gpu_models', need: 'A100', have: null })).toBe('Needs GPU models A100, it has none');
    expect(gapText(en, { field: 'distance_km', need: 25, have: 38 })).toBe('Must be within 25 km, it is 38 km away');
    expect(gapText(en, { field: 'distance_km', need: 25, have: null })).toBe('Must be within 25 km, the device has no location');
    expect(gapText(en, { field: 'status', need: 'online', have: 'offline' })).toBe('Device must be Online, it is Offline');
    expect(gapText(en, { field: 'memory_bytes', need: 2 ** 30, have: 0 })).toBe('Needs 1.00 GB free memory, it has 0 B');
    expect(gapText(en, { field: 'rentable', need: true, have: false })).toBe('The device is not offered for rent');
    expect(gapText(en, { field: 'reserved', need: false, have: true })).toBe('The device is reserved for another order');
  });

  it('and in Chinese', () => {
    expect(gapText(zh, { field: 'gpu_count', need: 4, have: 2 })).toBe('需要 4 块空闲 GPU，当前 2 块');
    expect(gapText(zh, { field: 'distance_km', need: 25, have: 38 })).toBe('须在 25 公里以内，当前距离 38 公里');
    expect(gapText(zh, { field: 'status', need: 'online', have: 'offline' })).toBe('设备须为在线，当前为离线');
  });
});
