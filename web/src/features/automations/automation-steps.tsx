import { useId, useState } from 'react';
import { buildOptions, OptionFields, propertiesOf, valuesFromOptions, type Value } from '../../components/option-form';
import { Button } from '../../components/button';
import { Field } from '../../components/field';
import type { TaskConfig } from '../../lib/api/objects';
import {
  conditionsOf,
  errorsOfStep,
  errorsUnder,
  formatValue,
  OPERATORS,
  parseValue,
  pathName,
  PROPS,
  stepNumber,
  stepsOf,
  type Condition,
  type Step,
  type StepPath,
} from './automations-model';
import { PlainOptions } from '../../components/plain-options';

// The builder's step cards: a vertical tree (ordered steps; a step's `next` steps under it), each
// card's options generated from the kind's schema in GET /tasks-config (components/option-form), a
// conditions step's rows (prop, operator, value), and the API's validation errors at the step and
// the field they name. Cards keep their typed text locally and are remounted (a new `revision`)
// when the tree changes from outside (the JSON view, adding/removing/moving steps).

/** Kinds a workflow step can be (any task kind but ingest and workflow). */
export function stepKinds(config: Record<string, TaskConfig>): TaskConfig[] {
  return Object.values(config).filter((c) => c.kind !== 'ingest' && c.kind !== 'workflow');
}

interface Row {
  prop: string;
  op: string;
  value: string;
}

const rowOf = (c: Condition): Row => ({ prop: c.prop, op: c.op ?? '', value: formatValue(c.value) });
function conditionOf(r: Row): Condition {
  const value = parseValue(r.value);
  return { prop: r.prop, ...(r.op ? { op: r.op } : {}), ...(value !== undefined ? { value } : {}) };
}

/** Rows of conditions (all must hold). `errors` are keyed `[0].prop`, `[1]`, … */
export function ConditionsEditor({
  conditions,
  onChange,
  errors,
  label,
  disabled,
}: {
  conditions: Condition[];
  onChange: (c: Condition[]) => void;
  errors: Record<string, string>;
  label: string;
  disabled: boolean;
}) {
  const [rows, setRows] = useState<Row[]>(() => conditions.map(rowOf));
  const listId = useId();
  const set = (next: Row[]) => {
    setRows(next);
    onChange(next.map(conditionOf));
  };
  return (
    <fieldset className="conditions" aria-label={label}>
      <legend>{label}</legend>
      {rows.length === 0 ? <p className="small muted">No conditions: always holds.</p> : null}
      <datalist id={listId}>
        {PROPS.map((p) => (
          <option key={p} value={p} />
        ))}
      </datalist>
      {rows.map((r, i) => {
        const at = (f: string) => errors[`[${i}].${f}`];
        const n = i + 1;
        return (
          <div className="condition-row" key={i} data-condition={i}>
            <Field label={`Property ${n}`} error={at('prop')}>
              {(p) => (
                <input
                  {...p}
                  list={listId}
                  value={r.prop}
                  disabled={disabled}
                  placeholder="kind, width, file.type, metadata.…"
                  onChange={(e) => set(rows.map((x, j) => (j === i ? { ...x, prop: e.target.value } : x)))}
                />
              )}
            </Field>
            <Field label={`Operator ${n}`} error={at('op')}>
              {(p) => (
                <select
                  {...p}
                  value={r.op}
                  disabled={disabled}
                  onChange={(e) => set(rows.map((x, j) => (j === i ? { ...x, op: e.target.value } : x)))}
                >
                  <PlainOptions any="equals" values={OPERATORS} />
                </select>
              )}
            </Field>
            <Field label={`Value ${n}`} error={at('value')}>
              {(p) => (
                <input
                  {...p}
                  value={r.value}
                  disabled={disabled}
                  onChange={(e) => set(rows.map((x, j) => (j === i ? { ...x, value: e.target.value } : x)))}
                />
              )}
            </Field>
            {!disabled ? (
              <Button
                className="btn-small"
                aria-label={`Remove condition ${n} of ${label}`}
                onClick={() => set(rows.filter((_, j) => j !== i))}
              >
                Remove
              </Button>
            ) : null}
            {errors[`[${i}]`] ? <p className="field-error">{errors[`[${i}]`]}</p> : null}
          </div>
        );
      })}
      {errors[''] ? <p className="field-error">{errors['']}</p> : null}
      {!disabled ? (
        <Button className="btn-small" onClick={() => set([...rows, { prop: '', op: '', value: '' }])}>
          Add condition to {label}
        </Button>
      ) : null}
    </fieldset>
  );
}

interface CardProps {
  step: Step;
  path: StepPath;
  siblings: number;
  config: Record<string, TaskConfig>;
  errors: Record<string, string>;
  revision: number;
  disabled: boolean;
  onChange: (path: StepPath, step: Step) => void;
  onRemove: (path: StepPath) => void;
  onMove: (path: StepPath, by: -1 | 1) => void;
  onAdd: (parent: StepPath) => void;
  /** The last dry run's verdict per step path, shown on the cards. */
  dry: Map<string, { runs: string; branch?: string }>;
}

/** The keys of a step that are not options: kept as they are when the options change. */
const META = new Set(['kind', 'ref', 'folder', 'filename', 'next', 'conditions']);

export function StepCard(props: CardProps) {
  const { step, path, siblings, config, errors, revision, disabled, onChange, onRemove, onMove, onAdd, dry } = props;
  const kind = typeof step.kind === 'string' ? step.kind : '';
  const kc = config[kind] ?? (kind === 'subtitle' ? config.subtitles : undefined);
  const properties = propertiesOf(kc?.options);
  delete properties.conditions;
  const name = pathName(path);
  const number = stepNumber(path);
  const mine = errorsOfStep(errors, name);
  const [values, setValues] = useState<Record<string, Value>>(() => valuesFromOptions(properties, step));
  const [local, setLocal] = useState<Record<string, string>>({});
  const index = path[path.length - 1] ?? 0;
  const children = stepsOf(step.next);
  const isConditions = kind === 'conditions';

  const setOptions = (next: Record<string, Value>) => {
    setValues(next);
    const built = buildOptions(properties, next);
    setLocal(built.problems);
    if (Object.keys(built.problems).length > 0) return;
    const kept: Step = {};
    for (const [k, v] of Object.entries(step)) if (!Object.hasOwn(properties, k) || META.has(k)) kept[k] = v;
    onChange(path, { ...kept, ...built.options });
  };
  const setMeta = (key: string, v: unknown) => {
    const out: Step = { ...step };
    if (v === undefined || v === '') delete out[key];
    else out[key] = v;
    onChange(path, out);
  };
  const fieldErrors: Record<string, string> = { ...local };
  for (const [f, m] of Object.entries(mine)) if (Object.hasOwn(properties, f.split('.')[0] ?? '')) fieldErrors[f] = m;
  const listed = Object.entries(mine);
  const verdict = dry.get(name);

  return (
    <li className="step" data-step={name}>
      <section
        className={`step-card ${listed.length > 0 ? 'step-card-invalid' : ''}`}
        aria-label={`Step ${number}${kind ? `: ${kind}` : ''}`}
      >
        <header className="step-head">
          <span className="step-number" aria-hidden="true">
            {number}
          </span>
          <Field label={`Kind of step ${number}`} error={mine.kind}>
            {(p) => (
              <select
                {...p}
                value={kind}
                disabled={disabled}
                onChange={(e) => {
                  const out: Step = { kind: e.target.value };
                  if (typeof step.ref === 'string') out.ref = step.ref;
                  if (step.next !== undefined) out.next = step.next;
                  if (e.target.value === 'conditions') out.conditions = [];
                  setValues({});
                  onChange(path, out);
                }}
              >
                <option value="">Choose a kind…</option>
                {stepKinds(config).map((k) => (
                  <option key={k.kind} value={k.kind}>
                    {k.kind}
                    {k.engine?.unavailable ? ' (unavailable here)' : ''}
                  </option>
                ))}
                {kind && !kc ? <option value={kind}>{kind} (unknown)</option> : null}
              </select>
            )}
          </Field>
          {verdict ? (
            <span
              className={`badge ${verdict.runs === 'yes' ? 'badge-ok' : verdict.runs === 'no' ? 'badge-danger' : 'badge-warn'}`}
              data-dry-runs={verdict.runs}
            >
              dry run: {verdict.runs === 'yes' ? 'would run' : verdict.runs === 'no' ? 'would not run' : 'unknown'}
              {verdict.branch ? `, branch ${verdict.branch.replace('_', ' ')}` : ''}
            </span>
          ) : null}
          {!disabled ? (
            <div className="step-actions">
              <Button
                className="btn-small"
                aria-label={`Move step ${number} up`}
                disabled={index === 0}
                onClick={() => onMove(path, -1)}
              >
                ↑
              </Button>
              <Button
                className="btn-small"
                aria-label={`Move step ${number} down`}
                disabled={index >= siblings - 1}
                onClick={() => onMove(path, 1)}
              >
                ↓
              </Button>
              <Button className="btn-small" tone="danger" onClick={() => onRemove(path)}>
                Remove step {number}
              </Button>
            </div>
          ) : null}
        </header>
        {listed.length > 0 ? (
          <div className="banner banner-error step-errors" role="alert">
            <ul>
              {listed.map(([f, m]) => (
                <li key={f}>
                  <code>{f ? `${name}.${f}` : name}</code>: {m}
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {kc?.engine?.unavailable ? <p className="small muted">Cannot run here: {kc.engine.unavailable}</p> : null}
        {isConditions ? (
          <ConditionsEditor
            key={`c${revision}`}
            label={`Conditions of step ${number}`}
            conditions={conditionsOf(step.conditions)}
            onChange={(c) => setMeta('conditions', c)}
            errors={errorsUnder(mine, 'conditions')}
            disabled={disabled}
          />
        ) : kind ? (
          <details className="step-options" open={Object.keys(fieldErrors).length > 0 || undefined}>
            <summary>Options of step {number}</summary>
            <fieldset disabled={disabled}>
              <Field label="ref (the output's name in the media)" error={mine.ref}>
                {(p) => (
                  <input
                    {...p}
                    value={typeof step.ref === 'string' ? step.ref : ''}
                    onChange={(e) => setMeta('ref', e.target.value)}
                  />
                )}
              </Field>
              <OptionFields
                properties={properties}
                required={kc?.required ?? []}
                values={values}
                setValue={(p, v) => setOptions({ ...values, [p]: v })}
                errors={fieldErrors}
              />
            </fieldset>
          </details>
        ) : null}
      </section>
      {children.length > 0 ? (
        <ol className="step-tree" aria-label={`After step ${number}`}>
          {children.map((c, i) => (
            <StepCard
              key={`${revision}:${name}.${i}`}
              {...props}
              step={c}
              path={[...path, i]}
              siblings={children.length}
            />
          ))}
        </ol>
      ) : null}
      {!disabled && kind ? (
        <div className="step-add">
          <Button className="btn-small" onClick={() => onAdd(path)}>
            {isConditions ? `Add a step when step ${number}'s conditions hold` : `Add a step after step ${number}`}
          </Button>
        </div>
      ) : null}
    </li>
  );
}
