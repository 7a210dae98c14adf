// Server rendering only: pieces of markup rendered once and reused by later renders of the same
// runtime (docs/performance.md). The market's cards are most of a page's render time in QuickJS and
// rarely change between renders, so a card whose inputs are the same as in an earlier render is not
// rendered again: the render leaves a placeholder the server fills with the card's earlier markup.
//
// The markup kept is the markup React rendered in place (with the page's contexts), cut out of the
// page between two marker elements that are then removed, so a reused card is byte for byte what
// rendering it would give. A reused piece is keyed by everything it reads (its `inputs`: its data,
// the language, the path prefix) and must not use `useId` (ids depend on the place in the tree).
// In the browser there is no store: `Reused` renders its children.
import { createContext, useContext, type ReactNode } from 'react';

/** Pieces kept at most; over it the store starts again (a page shows a few dozen). */
const MAX_PIECES = 1000;

const MARKER = /<template data-zm-(piece|begin|end)="(\d+)"><\/template>/g;

export class FragmentStore {
  private kept = new Map<string, string>();
  private slots: string[] = [];

  /** Starts a render: slot numbers restart. */
  begin() {
    this.slots = [];
  }

  /** The slot of a piece in this render, and whether its markup is kept already. */
  slot(key: string): { n: number; kept: boolean } {
    this.slots.push(key);
    return { n: this.slots.length - 1, kept: this.kept.has(key) };
  }

  /** The page's markup with kept pieces filled in and new pieces kept (their markers removed). */
  finish(html: string): string {
    if (!this.slots.length) return html;
    let begun = -1;
    let start = 0;
    const out = html.replace(MARKER, (marker, kind: string, n: string, at: number) => {
      const key = this.slots[Number(n)];
      if (kind === 'piece') return this.kept.get(key) ?? '';
      if (kind === 'begin') {
        begun = Number(n);
        start = at + marker.length;
      } else if (begun === Number(n)) {
        if (this.kept.size >= MAX_PIECES) this.kept.clear();
        this.kept.set(key, html.slice(start, at));
        begun = -1;
      }
      return '';
    });
    this.slots = [];
    return out;
  }

  get size(): number {
    return this.kept.size;
  }
}

export const FragmentsContext = createContext<FragmentStore | null>(null);

/**
 * `children`, rendered once per distinct `inputs` on the server (JSON-serializable: everything the
 * children read) and reused after. Pieces do not nest: inside one, another renders plainly.
 */
export function Reused({ inputs, children }: { inputs: unknown[]; children: ReactNode }) {
  const store = useContext(FragmentsContext);
  if (!store) return children;
  const { n, kept } = store.slot(JSON.stringify(inputs));
  if (kept) return <template data-zm-piece={n} />;
  return (
    <>
      <template data-zm-begin={n} />
      <FragmentsContext.Provider value={null}>{children}</FragmentsContext.Provider>
      <template data-zm-end={n} />
    </>
  );
}
