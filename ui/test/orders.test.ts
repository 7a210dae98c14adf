import { describe, expect, it } from 'vitest';
import { translate, type MessageKey } from '../src/i18n';
import { ordersEn, ordersZh } from '../src/i18n/orders';
import { gapText } from '../src/pages/ondemand/orders';
import { gpuMinimums } from '../src/pages/ondemand/PlaceOrderPage';

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

const GIB = 1024 ** 3;

describe('a demand’s minimum CUDA and VRAM', () => {
  it('are worded as gaps in both languages, sizes as elsewhere', () => {
    expect(gapText(en, { field: 'min_vram', need: 80 * GIB, have: 24 * GIB })).toBe('VRAM per GPU: needs 80.00 GB, has 24.00 GB');
    expect(gapText(en, { field: 'min_vram', need: 80 * GIB, have: null })).toBe('VRAM per GPU: needs 80.00 GB, has none');
    expect(gapText(zh, { field: 'min_vram', need: 80 * GIB, have: 24 * GIB })).toBe('每块 GPU 显存：需要 80.00 GB，实际 24.00 GB');
    expect(gapText(zh, { field: 'min_vram', need: 80 * GIB, have: null })).toBe('每块 GPU 显存：需要 80.00 GB，实际 无');
    expect(gapText(en, { field: 'cuda', need: '12.4', have: '12.2' })).toBe('CUDA: needs 12.4, the box runs 12.2');
    expect(gapText(zh, { field: 'cuda', need: '12.4', have: '12.2' })).toBe('CUDA：需要 12.4，设备为 12.2');
  });

  it('have the same keys and placeholders in both languages', () => {
    const ph = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort().join(',');
    expect(Object.keys(ordersZh).sort()).toEqual(Object.keys(ordersEn).sort());
    for (const k of Object.keys(ordersEn) as (keyof typeof ordersEn)[]) expect(ph(ordersZh[k]), k).toBe(ph(ordersEn[k]));
  });

  it('are sent from the form as "major.minor" and bytes (1 GB = 1024³ bytes); empty or 0 is any', () => {
    expect(gpuMinimums('12.4', '80')).toEqual({ min_cuda: '12.4', min_vram: 80 * GIB });
    expect(gpuMinimums(' 13 ', '0.5')).toEqual({ min_cuda: '13', min_vram: GIB / 2 });
    expect(gpuMinimums('', '')).toEqual({ min_cuda: null, min_vram: null });
    expect(gpuMinimums('', '0')).toEqual({ min_cuda: null, min_vram: null });
    expect(gpuMinimums('', '16384').min_vram).toBe(16 * 1024 * GIB);
    for (const bad of ['abc', '12.x', '12.4.1', '1234.0', '.4']) expect(gpuMinimums(bad, '').min_cuda, bad).toBeUndefined();
    for (const bad of ['-1', '80G', '1e3', '16385']) expect(gpuMinimums('', bad).min_vram, bad).toBeUndefined();
  });
});
