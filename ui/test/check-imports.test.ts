// The import check of `npm test` (scripts/check-imports.mjs) finds what it is there to find.
import { describe, expect, it } from 'vitest';
// @ts-expect-error the script is plain JS
import { cycles, importGraph, layerOf, layerViolations, misplacedWidgets } from '../scripts/check-imports.mjs';

const graph = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

describe('import check', () => {
  it('finds a cycle, and none in a tree', () => {
    expect(cycles(graph({ 'src/lib/a.ts': ['src/lib/b.ts'], 'src/lib/b.ts': ['src/lib/c.ts'], 'src/lib/c.ts': ['src/lib/a.ts'] }))).toEqual([
      ['src/lib/a.ts', 'src/lib/b.ts', 'src/lib/c.ts'],
    ]);
    expect(cycles(graph({ 'src/lib/a.ts': ['src/lib/b.ts'], 'src/lib/b.ts': [] }))).toEqual([]);
  });

  it('refuses an import against the layers and across page areas', () => {
    expect(layerOf('src/stores/session.ts')).toBe('stores');
    expect(layerOf('src/main.tsx')).toBe('entry');
    expect(layerViolations(graph({ 'src/stores/x.ts': ['src/app/y.tsx'] }))).toHaveLength(1);
    expect(layerViolations(graph({ 'src/lib/x.ts': ['src/api/client.ts'] }))).toHaveLength(1);
    expect(layerViolations(graph({ 'src/pages/market/A.tsx': ['src/pages/nearby/B.tsx'] }))).toHaveLength(1);
    expect(layerViolations(graph({ 'src/pages/market/A.tsx': ['src/pages/market/B.tsx', 'src/components/C.tsx', 'src/lib/d.ts'] }))).toEqual([]);
  });

  it("finds a widget of components/ that only one page area uses (it belongs in that area)", () => {
    const market = 'src/pages/market/A.tsx';
    expect(misplacedWidgets(graph({ [market]: ['src/components/Rent.tsx'], 'src/pages/market/B.tsx': ['src/components/Rent.tsx'] }))).toEqual([
      'src/components/Rent.tsx is imported only by pages/market/: move it there',
    ]);
    // Shared by two areas, or by an area and another layer (the app, another widget): it stays.
    expect(misplacedWidgets(graph({ [market]: ['src/components/C.tsx'], 'src/pages/nearby/B.tsx': ['src/components/C.tsx'] }))).toEqual([]);
    expect(misplacedWidgets(graph({ [market]: ['src/components/C.tsx'], 'src/app/header.tsx': ['src/components/C.tsx'] }))).toEqual([]);
    expect(misplacedWidgets(graph({ [market]: ['src/components/C.tsx'], 'src/components/D.tsx': ['src/components/C.tsx'] }))).toEqual([]);
  });

  it('sees the real graph: the app imports pages, and pages import lib', async () => {
    const g: Map<string, string[]> = await importGraph();
    expect(g.get('src/app/routes.tsx')).toContain('src/pages/market/MarketPage.tsx');
    expect(g.get('src/pages/market/MarketPage.tsx')).toContain('src/lib/paths.ts');
  });
});
