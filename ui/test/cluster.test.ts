import { describe, expect, it } from 'vitest';
import { clusterPoints, clusterSize } from '../src/pages/nearby/cluster';

describe('grid clustering', () => {
  it('keeps far points apart and merges points in one cell at their mean', () => {
    const clusters = clusterPoints(
      [
        { item: 'a', x: 10, y: 10 },
        { item: 'b', x: 30, y: 50 },
        { item: 'c', x: 300, y: 300 },
      ],
      60,
    );
    expect(clusters).toHaveLength(2);
    expect(clusters[0]).toEqual({ items: ['a', 'b'], x: 20, y: 30 });
    expect(clusters[1]).toEqual({ items: ['c'], x: 300, y: 300 });
  });

  it('splits the same points when the cells are smaller (zooming in)', () => {
    const pts = [
      { item: 1, x: 10, y: 10 },
      { item: 2, x: 50, y: 10 },
    ];
    expect(clusterPoints(pts, 100)).toHaveLength(1);
    expect(clusterPoints(pts, 20)).toHaveLength(2);
  });

  it('ignores points that cannot be placed', () => {
    expect(clusterPoints([{ item: 1, x: NaN, y: 0 }], 60)).toEqual([]);
  });

  it('sizes cluster icons by count', () => {
    expect(clusterSize(2)).toBe('small');
    expect(clusterSize(10)).toBe('medium');
    expect(clusterSize(250)).toBe('large');
  });
});
