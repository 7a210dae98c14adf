// Offers a renter can choose from (issue 39): the Rent dialog's sort and filters as the query the
// server reads, and what an offer says of its box (spec, GPU memory, reliability, distance) in
// both languages.
import { describe, expect, it } from 'vitest';
import type { OfferFit } from '../src/api/gpus';
import { gpuTranslate, type GpuKey } from '../src/components/devices/gpuText';
import type { MessageKey } from '../src/i18n';
import { NO_FILTERS, filtering, offerFacts, offerQuery } from '../src/pages/market/offers';

const en = (key: GpuKey | MessageKey, params?: Record<string, string | number>) => gpuTranslate('en', key, params);
const zh = (key: GpuKey | MessageKey, params?: Record<string, string | number>) => gpuTranslate('zh', key, params);
const GIB = 1024 ** 3;
const at = { lat: 31.23, lng: 121.47 };

const offer = (over: Partial<OfferFit>): OfferFit => ({
  device_id: 'D1',
  device_name: 'Box',
  device_status: 'online',
  fits: true,
  free: { cpu_cores: 8, memory_bytes: 0, disk_bytes: 0, gpu_count: 0 },
  gaps: [],
  gpus: ['NVIDIA H200'],
  price_per_hour: 300,
  reason: null,
  gpus_free: 1,
  verified: null,
  cuda: '12.8',
  spec: {
    cpu_cores: 16,
    memory_bytes: 64 * GIB,
    disk_bytes: 1024 * GIB,
    gpus: [{ index: 0, uuid: null, name: 'NVIDIA H200', passthrough: true, vram: 141 * GIB, driver: null, cuda: '12.8', compute_capability: null, mig: null }],
  },
  reliability: { uptime_7d: 0.9912, uptime_30d: 0.97 },
  distance_km: 1068,
  location: { lat: 39.9, lng: 116.41 },
  ...over,
});

describe('the offers query', () => {
  it('sends the point and only what is set', () => {
    expect(offerQuery(NO_FILTERS, at)).toEqual({ lat: 31.23, lng: 121.47 });
    expect(filtering(NO_FILTERS)).toBe(false);
    const f = { sort: 'distance' as const, gpuModel: ' H200 ', minVramGib: '80', minCuda: '12.4', minReliability: '0.95' };
    expect(offerQuery(f, at)).toEqual({ lat: 31.23, lng: 121.47, sort: 'distance', gpu_model: 'H200', min_vram: 80 * GIB, min_cuda: '12.4', min_reliability: '0.95' });
    expect(filtering(f)).toBe(true);
    expect(filtering({ ...NO_FILTERS, sort: 'vram' })).toBe(false);
  });
  it('passes a figure that is not a number as typed, for the server to name', () => {
    expect(offerQuery({ ...NO_FILTERS, minVramGib: 'lots' }, at).min_vram).toBe('lots');
  });
});

describe('what an offer says of its box', () => {
  it('in English', () => {
    expect(offerFacts(en, offer({}))).toEqual(['16 vCPU · 64.00 GB memory · 1.00 TB disk', '141.00 GB GPU memory', 'Online 97% of 30 days (99.1% of 7)', '1,068 km away']);
  });
  it('in Chinese', () => {
    expect(offerFacts(zh, offer({}))).toEqual(['16 核 CPU · 内存 64.00 GB · 磁盘 1.00 TB', '显存 141.00 GB', '30 天在线 97%（7 天 99.1%）', '距离 1,068 km']);
  });
  it('a new box, no GPU, no place', () => {
    const f = offer({ spec: { cpu_cores: 4, memory_bytes: 8 * GIB, disk_bytes: 100 * GIB, gpus: [] }, reliability: { uptime_7d: null, uptime_30d: null }, distance_km: null, location: null });
    expect(offerFacts(en, f)).toEqual(['4 vCPU · 8.00 GB memory · 100.00 GB disk', 'New box: uptime is measured after its first day']);
    expect(offerFacts(zh, f)[1]).toBe('新设备：首日之后开始统计在线率');
  });
});
