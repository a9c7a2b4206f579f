import type { Kind } from '../../kinds/define.js';
import type { EngineName, EnginePlan, Engines } from '../../kinds/engines.js';
import { defaultEngines, kindOf } from '../../kinds/registry.js';
import { TASK_KINDS } from '../../shapes/task-kinds.js';

// GET /tasks-config (the 0.8 SDK's tasks.getTaskConfig()): what each kind accepts, generated from
// the kinds' own definitions — their option schemas (JSON Schema, as POST /tasks checks them), how
// they take their input — so it can never say something POST /tasks does not do.

/** How a kind takes its input: a file of the project or a url fetched first, a url only, or none. */
type InputMode = 'file' | 'url' | 'none';

function inputMode(k: Kind): InputMode {
  if (k.needsInputFile) return 'file';
  return k.urlIsOption ? 'none' : 'url';
}

/** The enum of an option, when it is one (formats, codecs). */
function choices(schema: Record<string, unknown> | undefined): unknown[] | undefined {
  return Array.isArray(schema?.enum) ? schema.enum : undefined;
}

type JsonSchemaObject = { properties?: Record<string, Record<string, unknown>>; required?: string[] };

/** A schema as plain JSON Schema: TypeBox keeps its own markers under symbols, which JSON drops. */
const plain = (s: unknown): JsonSchemaObject => JSON.parse(JSON.stringify(s)) as JsonSchemaObject;

/** An intelligence kind's engine here: the one it runs with by default, or why it cannot run. */
function engineInfo(plan: EnginePlan<EngineName> | undefined) {
  if (!plan) return {};
  return { engine: 'refused' in plan ? { unavailable: plan.refused } : { default: plan.plan } };
}

export function kindConfig(k: Kind, plan?: EnginePlan<EngineName>) {
  const schema = plain(k.options);
  const properties = schema.properties ?? {};
  return {
    kind: k.kind,
    input: inputMode(k),
    ...(k.inputKinds ? { input_kinds: [...k.inputKinds] } : {}),
    ...engineInfo(plan),
    options: properties,
    required: schema.required ?? [],
    ...(choices(properties.format) ? { formats: choices(properties.format) } : {}),
    ...(choices(properties.codec) ? { codecs: choices(properties.codec) } : {}),
    retry: { max_attempts: k.policy.maxAttempts, timeout_seconds: Math.round(k.policy.timeoutMs / 1000) },
  };
}
export type KindConfig = ReturnType<typeof kindConfig>;

/** Every kind this mediad runs, by name, with the engines this process has. */
export function tasksConfig(engines: Engines): Record<string, KindConfig> {
  const plans = defaultEngines(engines);
  const out: Record<string, KindConfig> = {};
  for (const kind of TASK_KINDS) out[kind] = kindConfig(kindOf(kind), plans[kind]);
  return out;
}
