// One figure of a row of figures (`<dl className="wallet-figures">`): the wallet's, the operator's overview.
export function Figure({ id, label, value, unit, hint }: { id: string; label: string; value: string; unit?: string; hint: string }) {
  return (
    <div className="wallet-figure" data-figure={id}>
      <dt>{label}</dt>
      <dd>
        <span className="figure-value">{value}</span>
        {unit ? <span className="figure-unit"> {unit}</span> : null}
        <span className="figure-hint">{hint}</span>
      </dd>
    </div>
  );
}
