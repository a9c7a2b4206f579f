// A select's options when each value is its own label: "any" (the empty value, no filter) first.

export function PlainOptions({ any, values }: { any: string; values: readonly string[] }) {
  return (
    <>
      <option value="">{any}</option>
      {values.map((v) => (
        <option key={v} value={v}>
          {v}
        </option>
      ))}
    </>
  );
}
