/** The API's shapes as the dashboard reads them (fields it does not use are left out). */

export interface Run {
  id: number;
  run_uuid: string;
  workflow_name: string;
  workflow_kind: string;
  target: string;
  params: Record<string, string>;
  status: string;
  workspace: string;
  started_at: string | null;
  completed_at: string | null;
  error_message: string;
  trigger_type: string;
  trigger_name: string;
  run_group_id: string;
  priority?: string;
  total_steps: number;
  completed_steps: number;
  current_step?: string;
  created_at: string;
}

export interface Step {
  id: string;
  step_name: string;
  step_type: string;
  status: string;
  command: string;
  output: string;
  error_message: string;
  exit_code?: number;
  duration_ms: number;
  started_at: string | null;
  completed_at: string | null;
}

export interface Artifact {
  id: string;
  run_id: number;
  workspace: string;
  name: string;
  artifact_path: string;
  artifact_type: string;
  content_type: string;
  size_bytes: number;
  line_count: number;
  description: string;
  created_at: string;
}

export interface WorkflowParam {
  name: string;
  required: boolean;
  default: string;
  generator: string;
}

export interface Workflow {
  name: string;
  kind: 'flow' | 'module';
  description: string;
  tags: string[];
  params: WorkflowParam[];
  required_params: string[];
  step_count: number;
  module_count: number;
  indexed_at?: string;
}

export interface WorkflowDetail extends Workflow {
  steps: { index: number; name: string; type: string; command: string; timeout: string; pre_condition: string; depends_on?: string[]; parallel_steps?: { name: string; type: string }[] }[];
  modules: { index: number; name: string; path: string; depends_on: string[]; condition: string }[];
  triggers: { name: string; on: string; schedule: string; topic: string; enabled: boolean }[];
  dependencies: { commands: string[]; files: string[] };
}

export interface LintIssue {
  severity: 'error' | 'warning' | 'info';
  line?: number;
  path?: string;
  message: string;
  rule?: string;
}

export interface Workspace {
  id: number;
  name: string;
  data_source: string;
  total_assets: number;
  total_subdomains: number;
  total_urls: number;
  total_vulns: number;
  vuln_critical: number;
  vuln_high: number;
  vuln_medium: number;
  vuln_low: number;
  vuln_info: number;
  risk_score: number;
  last_run: string | null;
  run_workflow?: string;
  created_at: string;
}

export interface Asset {
  id: number;
  workspace: string;
  asset_value: string;
  url: string;
  asset_type: string;
  status_code: number;
  title: string;
  content_length: number;
  host_ip: string;
  tech: string[];
  source: string;
  created_at: string;
}

export interface Vuln {
  id: number;
  workspace: string;
  vuln_info: string;
  vuln_title: string;
  vuln_desc: string;
  vuln_poc: string;
  severity: string;
  confidence: string;
  asset_type: string;
  asset_value: string;
  tags: string[];
  detail_http_request: string;
  detail_http_response: string;
  raw_vuln_json: string;
  created_at: string;
}

export interface Schedule {
  id: string;
  name: string;
  workflow_name: string;
  workflow_kind?: string;
  trigger_type: string;
  schedule: string;
  event_topic: string;
  watch_path: string;
  input_config: { target?: string; params?: Record<string, string> } & Record<string, unknown>;
  is_enabled: boolean;
  last_run: string | null;
  next_run: string | null;
  run_count: number;
}

export interface EventLog {
  id: number;
  topic: string;
  name: string;
  source: string;
  data: string;
  workspace: string;
  run_id: string;
  workflow_name: string;
  processed: boolean;
  error: string;
  created_at: string;
}

export interface Stats {
  workflows: { total: number; flows: number; modules: number };
  runs: Record<string, number>;
  workspaces: { total: number };
  assets: { total: number };
  vulnerabilities: Record<string, number>;
  schedules: { total: number; enabled: number };
}

export interface Diff {
  id: number;
  workspace_name: string;
  from_time: string;
  to_time: string;
  total_added: number;
  total_removed: number;
  total_changed: number;
  diff_data: string;
  run_id?: number;
  created_at: string;
}
