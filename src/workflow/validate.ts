/**
 * Structural validation after inheritance, with the reference's messages (workflow-engine §1.16).
 * Duplicate names, bad goto targets, unknown depends_on and cycles are the linter's business.
 */
import { STEP_TYPES, type ModuleRef, type Step, type Workflow, type WorkflowIssue } from './types.js';
import { issueAt } from './wf-issues.js';
import { COMMAND_PRESET, canonicalPreset, presetProblem } from './agent-presets.js';

export { formatIssue, hasErrors } from './wf-issues.js';

const HEURISTICS = ['none', 'basic', 'advanced'];

function nonEmpty(list: readonly unknown[] | undefined): boolean {
  return Array.isArray(list) && list.length > 0;
}

function hasText(value: string | undefined): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

/** Validates a resolved workflow; returns every problem found (errors only). */
export function validateWorkflow(wf: Workflow): WorkflowIssue[] {
  const issues: WorkflowIssue[] = [];
  const err = (node: object | undefined, key: string | undefined, path: string, message: string) =>
    issues.push(issueAt(wf, node, key, path, message, 'error', 'validate'));

  if (!hasText(wf.name)) err(wf, 'name', 'name', 'workflow name is required');
  if (wf.kind !== 'module' && wf.kind !== 'flow') {
    err(wf, 'kind', 'kind', `invalid kind '${String(wf.kind)}': must be 'module' or 'flow'`);
  }
  if (wf.kind === 'module' && !nonEmpty(wf.steps) && !wf.extends) err(wf, 'steps', 'steps', 'module must have at least one step');
  if (wf.kind === 'flow' && !nonEmpty(wf.modules) && !wf.extends) err(wf, 'modules', 'modules', 'flow must have at least one module reference');

  if (wf.kind === 'module') wf.steps.forEach((s, i) => validateStep(s, `steps[${i}]`, err));
  wf.hooks.pre_scan_steps.forEach((s, i) => validateStep(s, `hooks.pre_scan_steps[${i}]`, err));
  wf.hooks.post_scan_steps.forEach((s, i) => validateStep(s, `hooks.post_scan_steps[${i}]`, err));
  if (wf.kind === 'flow') wf.modules.forEach((m, i) => validateModuleRef(m, `modules[${i}]`, err));

  const hc = wf.preferences.heuristics_check;
  if (hc !== undefined && !HEURISTICS.includes(String(hc))) {
    err(wf, 'preferences', 'preferences.heuristics_check', `invalid value '${String(hc)}': must be none, basic or advanced`);
  }
  return issues;
}

type Report = (node: object | undefined, key: string | undefined, path: string, message: string) => void;

function validateModuleRef(m: ModuleRef, path: string, err: Report): void {
  if (!hasText(m.name)) err(m, 'name', `${path}.name`, 'module reference name is required');
  if (nonEmpty(m.steps)) {
    m.steps!.forEach((s, i) => validateStep(s, `${path}.steps[${i}]`, err));
  } else if (!hasText(m.path)) {
    err(m, 'path', `${path}.path`, 'module reference path is required (or define inline steps)');
  }
}

function validateStep(step: Step, path: string, err: Report): void {
  if (!hasText(step.name)) err(step, 'name', `${path}.name`, 'step name is required');
  if (!step.type) {
    err(step, 'type', `${path}.type`, 'step type is required');
    return;
  }
  if (!(STEP_TYPES as readonly string[]).includes(step.type)) {
    err(step, 'type', `${path}.type`, `invalid step type '${String(step.type)}'`);
    return;
  }
  switch (step.type) {
    case 'bash':
      if (!hasCommand(step)) err(step, undefined, path, 'bash step must have command, commands, or parallel_commands');
      break;
    case 'function':
      if (!step.function && !nonEmpty(step.functions) && !nonEmpty(step.parallel_functions)) {
        err(step, undefined, path, 'function step must have function, functions, or parallel_functions');
      }
      break;
    case 'parallel-steps':
      if (!nonEmpty(step.parallel_steps)) err(step, 'parallel_steps', `${path}.parallel_steps`, 'parallel-steps step must have parallel_steps');
      else step.parallel_steps!.forEach((s, i) => validateStep(s, `${path}.parallel_steps[${i}]`, err));
      break;
    case 'foreach':
      if (Array.isArray(step.input) ? step.input.length === 0 : !hasText(step.input)) {
        err(step, 'input', `${path}.input`, 'foreach step must have input');
      }
      if (!hasText(step.variable)) err(step, 'variable', `${path}.variable`, 'foreach step must have variable');
      if (!step.step) err(step, 'step', `${path}.step`, 'foreach step must have step');
      else validateStep(step.step, `${path}.step`, err);
      break;
    case 'remote-bash':
      if (step.step_runner !== 'docker' && step.step_runner !== 'ssh') {
        err(step, 'step_runner', `${path}.step_runner`, `remote-bash step must have step_runner docker or ssh${step.step_runner ? ` (got '${step.step_runner}')` : ''}`);
      }
      if (!hasCommand(step)) err(step, undefined, path, 'remote-bash step must have command, commands, or parallel_commands');
      break;
    case 'http':
      if (!hasText(step.url)) err(step, 'url', `${path}.url`, 'http step must have url');
      break;
    case 'llm': {
      const hasMessages = nonEmpty(step.messages);
      const hasEmbedding = nonEmpty(step.embedding_input);
      if (!hasMessages && !hasEmbedding) {
        err(step, 'messages', `${path}.messages`, step.is_embedding ? 'embedding step must have embedding_input' : 'llm step must have messages or embedding_input');
      } else if (hasEmbedding && !hasMessages && step.is_embedding !== true) {
        err(step, 'embedding_input', `${path}.is_embedding`, 'embedding_input requires is_embedding: true');
      }
      break;
    }
    case 'agent':
      validateAgent(step, path, err);
      break;
    case 'agent-acp':
      if (!hasText(step.agent) && !hasText(step.acp_config?.command)) err(step, 'agent', `${path}.agent`, 'agent-acp step must have agent or acp_config.command');
      if (!nonEmpty(step.messages)) err(step, 'messages', `${path}.messages`, 'agent-acp step must have messages');
      else if (!step.messages!.some((m) => messageText(m.content).trim() !== '')) err(step, 'messages', `${path}.messages`, 'agent-acp step messages must have non-empty content');
      break;
    default:
      // agent-sdk: parsed for compatibility; the engine reports it as unsupported.
      break;
  }
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? (p as { text: string }).text : '')).join('');
  return '';
}

function validateAgent(step: Step, path: string, err: (node: object | undefined, key: string | undefined, path: string, message: string) => void): void {
  const hasQuery = hasText(step.query);
  const hasQueries = nonEmpty(step.queries);
  if (hasQuery === hasQueries) err(step, 'query', `${path}.query`, hasQuery ? 'agent step must have query or queries, not both' : 'agent step must have query or queries');
  if (step.max_iterations === undefined || step.max_iterations <= 0) err(step, 'max_iterations', `${path}.max_iterations`, 'agent step must have max_iterations > 0');
  if (!nonEmpty(step.agent_tools)) {
    err(step, 'agent_tools', `${path}.agent_tools`, 'agent step must have at least one tool in agent_tools');
    return;
  }
  const seen = new Set<string>();
  step.agent_tools!.forEach((t, i) => {
    const at = `${path}.agent_tools[${i}]`;
    let name: string;
    if (hasText(t.preset)) {
      const problem = presetProblem(t.preset!);
      if (problem) err(step, 'agent_tools', at, problem);
      name = canonicalPreset(t.preset!) ?? t.preset!;
      if (name === COMMAND_PRESET && !nonEmpty(step.allowed_commands)) {
        err(step, 'agent_tools', at, `agent tool preset '${t.preset}' needs allowed_commands (osm never gives an agent a shell)`);
      }
    } else {
      name = t.name ?? '';
      if (!/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(name)) err(step, 'agent_tools', `${at}.name`, 'custom agent tool must have a name (letters, digits, _ or -)');
      if (!hasText(t.handler)) err(step, 'agent_tools', `${at}.handler`, 'custom agent tool must have a handler (a function script)');
    }
    if (name && seen.has(name)) err(step, 'agent_tools', at, `duplicate agent tool '${name}'`);
    seen.add(name);
  });
  for (const c of step.allowed_commands ?? []) {
    if (!/^[A-Za-z0-9._+-]+$/.test(c)) err(step, 'allowed_commands', `${path}.allowed_commands`, `allowed command '${c}' must be a program name (no path, spaces or shell syntax)`);
  }
}

function hasCommand(step: Step): boolean {
  return (step.command !== undefined && step.command !== '') || nonEmpty(step.commands) || nonEmpty(step.parallel_commands);
}
