import { useId, type ReactNode } from 'react';
import { Field } from './field';
import './option-form.css';
import { isRecord } from '../lib/guards';

// Option forms generated from a task kind's JSON Schema (GET /tasks-config, exactly what POST /tasks
// and a workflow step check): enums become selects, booleans switches, numbers number inputs with
// their bounds, strings text inputs, number-or-enum text with suggestions, objects with properties
// nested fieldsets, and anything freer a JSON text area. Used by the media page's "run a task" form
// and the automation builder's step cards. Values are kept as typed (strings, booleans) by option
// path ("resize.width"); buildOptions turns them into the options object, valuesFromOptions back.

export type Schema = Record<string, unknown>;
export type Value = string | boolean;

/** What control an option gets. */
type Control =
  | { type: 'select'; choices: string[] }
  | { type: 'switch' }
  | { type: 'number'; integer: boolean; min?: number; max?: number }
  | { type: 'text'; suggestions: string[]; numeric: boolean; maxLength?: number }
  | { type: 'object'; properties: Record<string, Schema>; required: string[] }
  | { type: 'json' };

function num(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

export function controlFor(schema: Schema): Control {
  if (Array.isArray(schema.enum)) return { type: 'select', choices: schema.enum.map(String) };
  if (schema.type === 'boolean') return { type: 'switch' };
  if (schema.type === 'integer' || schema.type === 'number') {
    const min = num(schema.minimum);
    const max = num(schema.maximum);
    return {
      type: 'number',
      integer: schema.type === 'integer',
      ...(min !== undefined ? { min } : {}),
      ...(max !== undefined ? { max } : {}),
    };
  }
  if (schema.type === 'string') {
    const maxLength = num(schema.maxLength);
    return { type: 'text', suggestions: [], numeric: false, ...(maxLength !== undefined ? { maxLength } : {}) };
  }
  if (Array.isArray(schema.anyOf)) {
    // e.g. quality: an integer 1–100 or one of very_low…very_high.
    const parts = schema.anyOf.filter(isRecord);
    const suggestions = parts.flatMap((p) => (Array.isArray(p.enum) ? p.enum.map(String) : []));
    const numeric = parts.some((p) => p.type === 'integer' || p.type === 'number');
    return { type: 'text', suggestions, numeric };
  }
  if (schema.type === 'object' && isRecord(schema.properties)) {
    const properties: Record<string, Schema> = {};
    for (const [k, v] of Object.entries(schema.properties)) if (isRecord(v)) properties[k] = v;
    const required = Array.isArray(schema.required)
      ? schema.required.filter((r): r is string => typeof r === 'string')
      : [];
    return { type: 'object', properties, required };
  }
  return { type: 'json' };
}

function describe(schema: Schema, control: Control): string | undefined {
  const parts: string[] = [];
  if (typeof schema.description === 'string') parts.push(schema.description);
  if (control.type === 'number') {
    if (control.min !== undefined && control.max !== undefined) parts.push(`${control.min} to ${control.max}`);
    else if (control.min !== undefined) parts.push(`at least ${control.min}`);
    else if (control.max !== undefined) parts.push(`at most ${control.max}`);
  }
  if (control.type === 'text' && control.suggestions.length > 0)
    parts.push(`${control.numeric ? 'a number or ' : ''}one of ${control.suggestions.join(', ')}`);
  if (control.type === 'json') parts.push('JSON');
  if (schema.default !== undefined) parts.push(`default ${JSON.stringify(schema.default)}`);
  return parts.length > 0 ? parts.join(' · ') : undefined;
}

/** The option values as POST /tasks takes them; problems of the form itself by field path. */
export function buildOptions(
  properties: Record<string, Schema>,
  values: Record<string, Value>,
  prefix = '',
): { options: Record<string, unknown>; problems: Record<string, string> } {
  const options: Record<string, unknown> = {};
  const problems: Record<string, string> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const path = prefix ? `${prefix}.${name}` : name;
    const control = controlFor(schema);
    const raw = values[path];
    if (control.type === 'object') {
      const inner = buildOptions(control.properties, values, path);
      Object.assign(problems, inner.problems);
      if (Object.keys(inner.options).length > 0) options[name] = inner.options;
      continue;
    }
    if (raw === undefined || raw === '') continue;
    if (control.type === 'switch') options[name] = raw === true;
    else if (typeof raw !== 'string') continue;
    else if (control.type === 'number') {
      const n = Number(raw);
      if (!Number.isFinite(n)) problems[path] = 'must be a number';
      else options[name] = n;
    } else if (control.type === 'text') {
      options[name] = control.numeric && /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw;
    } else if (control.type === 'json') {
      try {
        options[name] = JSON.parse(raw);
      } catch {
        problems[path] = 'is not valid JSON';
      }
    } else options[name] = raw;
  }
  return { options, problems };
}

export function SwitchControl({
  id,
  checked,
  onChange,
  label,
}: {
  id: string;
  checked: boolean;
  onChange: (v: boolean) => void;
  label: string;
}) {
  return (
    <span className="switch">
      <button
        id={id}
        type="button"
        role="switch"
        aria-checked={checked}
        aria-label={label}
        onClick={() => onChange(!checked)}
      />
      <span>{checked ? 'On' : 'Off'}</span>
    </span>
  );
}

export function OptionFields({
  properties,
  required,
  values,
  setValue,
  errors,
  prefix = '',
}: {
  properties: Record<string, Schema>;
  required: string[];
  values: Record<string, Value>;
  setValue: (path: string, v: Value) => void;
  errors: Record<string, string>;
  prefix?: string;
}) {
  const listId = useId();
  return (
    <>
      {Object.entries(properties).map(([name, schema]) => {
        const path = prefix ? `${prefix}.${name}` : name;
        const control = controlFor(schema);
        const isRequired = required.includes(name);
        const label = `${name.replace(/_/g, ' ')}${isRequired ? ' (required)' : ''}`;
        const raw = values[path];
        const text = typeof raw === 'string' ? raw : '';
        const hint = describe(schema, control);
        if (control.type === 'object')
          return (
            <fieldset key={path} data-option={path}>
              <legend>
                {name.replace(/_/g, ' ')}
                {isRequired ? <span className="required-mark"> *</span> : null}
              </legend>
              <OptionFields
                properties={control.properties}
                required={control.required}
                values={values}
                setValue={setValue}
                errors={errors}
                prefix={path}
              />
            </fieldset>
          );
        let render: (p: { id: string }) => ReactNode;
        if (control.type === 'select')
          render = (p) => (
            <select {...p} value={text} required={isRequired} onChange={(e) => setValue(path, e.target.value)}>
              <option value="">
                {schema.default !== undefined
                  ? `Default (${String(schema.default)})`
                  : isRequired
                    ? 'Choose…'
                    : 'Default'}
              </option>
              {control.choices.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          );
        else if (control.type === 'switch')
          render = (p) => (
            <SwitchControl
              id={p.id}
              label={name}
              checked={raw === true || (raw === undefined && schema.default === true)}
              onChange={(v) => setValue(path, v)}
            />
          );
        else if (control.type === 'number')
          render = (p) => (
            <input
              {...p}
              type="number"
              inputMode={control.integer ? 'numeric' : 'decimal'}
              step={control.integer ? 1 : 'any'}
              min={control.min}
              max={control.max}
              required={isRequired}
              value={text}
              onChange={(e) => setValue(path, e.target.value)}
            />
          );
        else if (control.type === 'text')
          render = (p) => (
            <>
              <input
                {...p}
                type="text"
                list={control.suggestions.length > 0 ? `${listId}-${path}` : undefined}
                maxLength={control.maxLength}
                required={isRequired}
                value={text}
                onChange={(e) => setValue(path, e.target.value)}
              />
              {control.suggestions.length > 0 ? (
                <datalist id={`${listId}-${path}`}>
                  {control.suggestions.map((s) => (
                    <option key={s} value={s} />
                  ))}
                </datalist>
              ) : null}
            </>
          );
        else
          render = (p) => (
            <textarea
              {...p}
              rows={3}
              required={isRequired}
              value={text}
              onChange={(e) => setValue(path, e.target.value)}
              spellCheck={false}
            />
          );
        return (
          <div key={path} data-option={path}>
            <Field label={label} hint={hint} error={errors[path]}>
              {(p) => <>{render(p)}</>}
            </Field>
          </div>
        );
      })}
    </>
  );
}

/** The form values of an options object (the inverse of buildOptions), e.g. from a step's JSON. */
export function valuesFromOptions(
  properties: Record<string, Schema>,
  options: Record<string, unknown>,
  prefix = '',
): Record<string, Value> {
  const values: Record<string, Value> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const path = prefix ? `${prefix}.${name}` : name;
    const v = options[name];
    if (v === undefined) continue;
    const control = controlFor(schema);
    if (control.type === 'object') {
      if (isRecord(v)) Object.assign(values, valuesFromOptions(control.properties, v, path));
    } else if (control.type === 'switch') values[path] = v === true;
    else if (control.type === 'json') values[path] = JSON.stringify(v);
    else values[path] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return values;
}

/** The option schemas of a kind's config, typed. */
export function propertiesOf(options: Record<string, Record<string, unknown>> | undefined): Record<string, Schema> {
  const properties: Record<string, Schema> = {};
  for (const [k, v] of Object.entries(options ?? {})) properties[k] = v;
  return properties;
}
