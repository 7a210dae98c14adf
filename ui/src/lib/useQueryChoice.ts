// One of a few choices kept in the page's query (`?kind=income`, `?bills=billed`): the first
// choice is the default and leaves the query without the key.
import { useSearchParams } from 'react-router';

export function useQueryChoice<C extends { value: string | null }>(key: string, choices: readonly C[]): [C, (choice: C) => void] {
  const [params, setParams] = useSearchParams();
  const current = choices.find((c) => c.value !== null && c.value === params.get(key)) ?? choices[0];
  const choose = (choice: C) => {
    const next = new URLSearchParams(params);
    if (choice === choices[0] || choice.value === null) next.delete(key);
    else next.set(key, choice.value);
    setParams(next, { replace: true });
  };
  return [current, choose];
}
