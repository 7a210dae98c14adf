import { describe, expect, it } from 'vitest';
import {
  bytesToGbText,
  describeResources,
  distanceKm,
  formatCoins,
  formatDate,
  formatDateTime,
  formatDistance,
  formatNumber,
  formatSize,
  gpuCount,
  toEpochMs,
} from '../src/lib/format';

describe('formatSize', () => {
  it('steps by 1024 with two decimals', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(512)).toBe('512 B');
    expect(formatSize(1024)).toBe('1.00 KB');
    expect(formatSize(1536)).toBe('1.50 KB');
    expect(formatSize(1024 ** 2 * 10.256)).toBe('10.26 MB');
    expect(formatSize(1024 ** 3 * 16)).toBe('16.00 GB');
    expect(formatSize(1024 ** 4 * 2.5)).toBe('2.50 TB');
    expect(formatSize(1024 ** 5)).toBe('1024.00 TB');
  });
  it('rejects nonsense', () => {
    expect(formatSize(-1)).toBe('-');
    expect(formatSize(Number.NaN)).toBe('-');
  });
});

describe('formatNumber and coins', () => {
  it('groups thousands', () => {
    expect(formatNumber(0)).toBe('0');
    expect(formatNumber(999)).toBe('999');
    expect(formatNumber(1000)).toBe('1,000');
    expect(formatNumber(1234567)).toBe('1,234,567');
    expect(formatNumber(-1234567.891, 2)).toBe('-1,234,567.89');
    expect(formatNumber(1234.5, 2)).toBe('1,234.50');
  });
  it('formats integer minor units as coins', () => {
    expect(formatCoins(0)).toBe('0.00');
    expect(formatCoins(5)).toBe('0.05');
    expect(formatCoins(123456)).toBe('1,234.56');
    expect(formatCoins(-100)).toBe('-1.00');
    expect(formatCoins(100000000)).toBe('1,000,000.00');
  });
});

describe('distances', () => {
  it('rounds up to whole km', () => {
    expect(formatDistance(3.2)).toBe('4 km');
    expect(formatDistance(3)).toBe('3 km');
    expect(formatDistance(0)).toBe('0 km');
    expect(formatDistance(1234.01)).toBe('1,235 km');
  });
  it('uses the 6371 km sphere', () => {
    // One degree of longitude on the equator: 111.19 km -> 112.
    expect(distanceKm({ lat: 0, lng: 0 }, { lat: 0, lng: 1 })).toBe(112);
    expect(distanceKm({ lat: 22.54, lng: 114.06 }, { lat: 22.54, lng: 114.06 })).toBe(0);
  });
});

describe('dates (UTC, no Intl)', () => {
  it('parses RFC 3339 with offsets and fractions', () => {
    expect(toEpochMs('1970-01-01T00:00:00Z')).toBe(0);
    expect(toEpochMs('2024-05-01T08:00:00+08:00')).toBe(Date.UTC(2024, 4, 1, 0, 0, 0));
    expect(toEpochMs('2024-05-01T00:00:00.123456Z')).toBe(Date.UTC(2024, 4, 1) + 123);
    expect(toEpochMs('nonsense')).toBeNull();
  });
  it('reads epoch seconds and milliseconds', () => {
    expect(toEpochMs(1714521600)).toBe(1714521600000);
    expect(toEpochMs(1714521600000)).toBe(1714521600000);
    expect(toEpochMs('1714521600')).toBe(1714521600000);
  });
  it('formats in UTC', () => {
    expect(formatDateTime('2024-05-01T08:30:05+08:00')).toBe('2024-05-01 00:30');
    expect(formatDateTime(1714521600, true)).toBe('2024-05-01 00:00:00');
    expect(formatDate('2024-12-31T23:59:59-01:00')).toBe('2025-01-01');
    expect(formatDateTime(null)).toBe('-');
  });
});

describe('resource description (SPEC.md §9)', () => {
  const GB = 1024 ** 3;
  it('matches the documented form', () => {
    expect(describeResources({ cpu_cores: 8, memory_bytes: 16 * GB, disk_bytes: 512 * GB, gpu_count: 1 })).toBe(
      '8 Cores CPU, 16 GB Memory, 512 GB SSD Disk, GPU*1',
    );
    expect(describeResources({ cpu_cores: 4, memory_bytes: 8 * GB, disk_bytes: 100 * GB, gpu_count: 0 })).toBe(
      '4 Cores CPU, 8 GB Memory, 100 GB SSD Disk, No GPU',
    );
  });
  it('counts every GPU form of SPEC.md §3', () => {
    expect(gpuCount([{ name: 'A', passthrough: true, vram: 1 }, { name: 'B', passthrough: false, vram: 1 }])).toBe(2);
    expect(gpuCount(24 * GB)).toBe(1);
    expect(gpuCount(0)).toBe(0);
    expect(gpuCount('RTX 4090')).toBe(1);
    expect(gpuCount('')).toBe(0);
    expect(gpuCount(null)).toBe(0);
    expect(describeResources({ cpu_cores: 2, memory_bytes: 1.5 * GB, disk_bytes: 20 * GB, gpus: [] })).toBe(
      '2 Cores CPU, 1.5 GB Memory, 20 GB SSD Disk, No GPU',
    );
    expect(bytesToGbText(16 * GB)).toBe('16');
  });
});
