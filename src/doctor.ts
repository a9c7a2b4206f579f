// `mediad doctor`: the install (install-checks.ts: Node, data dir, database, TLS, port, FFmpeg's
// encoders) and the state of every intelligence engine — the local ones (found, version,
// model; the NSFW model is loaded to prove it runs) and the configured provider (reachable, the
// models it lists) — and which engine each kind would run with. GET /health never calls a
// provider; this command does. Problems are what is configured or installed but broken.
import {
  nsfwEngineStatus,
  ocrEngineStatus,
  providerStatus,
  sceneEngineStatus,
  speechEngineStatus,
  type EngineStatus,
  type ProviderStatus,
} from './ai/index.js';
import type { Config } from './config.js';
import type { Engines } from './kinds/engines.js';
import { defaultEngines } from './kinds/registry.js';
import { toolVersion } from './media/index.js';
import { createGuardedClient } from './net/index.js';
import { USER_AGENT } from './package-info.js';
import { installChecks, type InstallCheck } from './install-checks.js';

export interface ProviderCheck extends ProviderStatus {
  role: 'chat' | 'transcribe';
  base_url: string;
  model: string;
  model_listed: boolean;
}

/** FFmpeg and ffprobe as this process runs them (MEDIAD_FFMPEG_PATH, MEDIAD_FFPROBE_PATH). */
export interface ToolCheck {
  tool: 'ffmpeg' | 'ffprobe';
  found: boolean;
  version: string | null;
}

export interface DoctorReport {
  /** The install's checks (mediad doctor only; GET /system reports the engines). */
  install?: InstallCheck[];
  tools: ToolCheck[];
  local: EngineStatus[];
  provider: ProviderCheck[];
  /** Kind → the engine it runs with by default here, or why it cannot run. */
  kinds: Record<string, string>;
  problems: string[];
  warnings: string[];
}

const CHECK_TIMEOUT_MS = 10_000;

async function checkProvider(config: Config): Promise<ProviderCheck[]> {
  const parts = [
    ['chat', config.ai.chat],
    ['transcribe', config.ai.transcribe],
  ] as const;
  if (parts.every(([, ep]) => !ep)) return [];
  const client = createGuardedClient({
    ...config.fetch,
    idleTimeoutMs: Math.min(config.ai.timeoutMs ?? CHECK_TIMEOUT_MS, CHECK_TIMEOUT_MS),
    maxBytes: 16 * 1024 * 1024,
    userAgent: USER_AGENT,
  });
  try {
    const out: ProviderCheck[] = [];
    for (const [role, ep] of parts) {
      if (!ep) continue;
      const status = await providerStatus({
        baseUrl: ep.baseUrl,
        request: client.request,
        timeoutMs: Math.min(config.ai.timeoutMs ?? CHECK_TIMEOUT_MS, CHECK_TIMEOUT_MS),
        ...(config.ai.apiKey ? { apiKey: config.ai.apiKey } : {}),
      });
      out.push({
        role,
        base_url: ep.baseUrl,
        model: ep.model,
        model_listed: status.models.includes(ep.model),
        ...status,
      });
    }
    return out;
  } finally {
    await client.close();
  }
}

async function checkTools(config: Config): Promise<ToolCheck[]> {
  const bins = { ffmpeg: config.ffmpegPath, ffprobe: config.ffprobePath };
  return Promise.all(
    (['ffmpeg', 'ffprobe'] as const).map(async (tool) => {
      const version = await toolVersion(bins[tool], ['-version'], new RegExp(`${tool} version (\\S+)`));
      return { tool, found: version !== null, version };
    }),
  );
}

/**
 * The report. `loadNsfw` (default true) loads the NSFW model to prove it runs; GET /system passes
 * false and reports whether this process has loaded it.
 */
export async function doctor(
  config: Config,
  opts: { loadNsfw?: boolean; install?: boolean } = {},
): Promise<DoctorReport> {
  const [install, tools, speech, ocr, scenes, nsfw] = await Promise.all([
    opts.install ? installChecks(config) : undefined,
    checkTools(config),
    speechEngineStatus(),
    ocrEngineStatus(),
    sceneEngineStatus(),
    nsfwEngineStatus({ load: opts.loadNsfw ?? true }),
  ]);
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const c of install ?? []) {
    if (c.state === 'problem') problems.push(`${c.check}: ${c.detail}`);
    if (c.state === 'warning') warnings.push(`${c.check}: ${c.detail}`);
  }
  for (const t of tools)
    if (!t.found) problems.push(`${t.tool}: not found (install FFmpeg or set MEDIAD_${t.tool.toUpperCase()}_PATH)`);
  // Installed but unusable is broken; not installed at all is a choice (or a provider covers it).
  for (const s of [speech, ocr]) {
    if (s.found) continue;
    (s.version !== null ? problems : warnings).push(`${s.engine}: ${s.message ?? 'not available'}`);
  }
  if (!scenes.found) warnings.push(`${scenes.engine}: ${scenes.message ?? 'not available'}`);
  if (!nsfw.found) problems.push(`${nsfw.engine}: ${nsfw.message ?? 'not available'}`);

  const provider = await checkProvider(config);
  for (const p of provider) {
    if (!p.reachable) problems.push(`provider (${p.role}) at ${p.base_url} is not reachable: ${p.message ?? ''}`);
    else if (p.status) problems.push(`provider (${p.role}) at ${p.base_url} answered ${p.status}: ${p.message ?? ''}`);
    else if (!p.model_listed)
      problems.push(
        `provider (${p.role}) at ${p.base_url} does not list the model "${p.model}" (it lists: ${p.models.join(', ') || 'none'}); set the name it serves`,
      );
  }

  const engines: Engines = {
    chatModel: config.ai.chat?.model ?? null,
    transcribeModel: config.ai.transcribe?.model ?? null,
    local: { speech, ocr, nsfw, scenes },
  };
  const kinds: Record<string, string> = {};
  for (const [name, plan] of Object.entries(defaultEngines(engines)))
    kinds[name] = 'refused' in plan ? `unavailable: ${plan.refused}` : plan.plan;
  return {
    ...(install ? { install } : {}),
    tools,
    local: [speech, ocr, scenes, nsfw],
    provider,
    kinds,
    problems,
    warnings,
  };
}

/** The report as text for a terminal. */
export function formatDoctor(r: DoctorReport): string {
  const lines: string[] = [];
  if (r.install) {
    const mark = { ok: 'ok     ', warning: 'warning', problem: 'PROBLEM' } as const;
    lines.push('Install');
    for (const c of r.install) lines.push(`  ${c.check.padEnd(16)} ${mark[c.state]}  ${c.detail}`);
    lines.push('');
  }
  lines.push('Media tools');
  for (const t of r.tools) lines.push(`  ${t.tool.padEnd(14)} ${t.found ? `found  ${t.version}` : 'NOT FOUND'}`);
  lines.push('', 'Local engines');
  for (const s of r.local) {
    const facts = [s.found ? 'found' : 'NOT FOUND', s.version, s.model ? `model ${s.model}` : null].filter(Boolean);
    lines.push(`  ${s.engine.padEnd(14)} ${facts.join('  ')}${s.message ? `  (${s.message})` : ''}`);
  }
  lines.push('', 'Provider');
  if (r.provider.length === 0)
    lines.push('  not configured (MEDIAD_AI_BASE_URL, MEDIAD_AI_CHAT_MODEL, MEDIAD_AI_TRANSCRIBE_MODEL)');
  for (const p of r.provider) {
    const state = p.reachable ? (p.status ? `answered ${p.status}` : 'reachable') : 'NOT REACHABLE';
    lines.push(
      `  ${p.role.padEnd(14)} ${p.base_url}  model ${p.model}${p.model_listed ? '' : ' (not listed)'}  ${state}`,
    );
    if (p.models.length > 0) lines.push(`  ${''.padEnd(14)} lists: ${p.models.join(', ')}`);
  }
  lines.push('', 'Kinds (default engine)');
  for (const [kind, state] of Object.entries(r.kinds)) lines.push(`  ${kind.padEnd(14)} ${state}`);
  if (r.warnings.length > 0) lines.push('', 'Warnings', ...r.warnings.map((w) => `  - ${w}`));
  lines.push(
    '',
    r.problems.length === 0 ? 'OK' : `${r.problems.length} problem(s):`,
    ...r.problems.map((p) => `  - ${p}`),
  );
  return `${lines.join('\n')}\n`;
}
