/**
 * The function catalogue as data (reference server-api §10.2, spec "Utility function catalog"):
 * what `osm func list` and `GET /functions/list` show. Every name here is callable by its
 * snake_case name and by its camelCase aliases. The database entries are implemented by the data
 * plane through registerFunctions('database', …); until then they answer an "error: …" string.
 */

/**
 * Functions of the reference's catalogue that osm does not implement. They are not listed (`osm
 * func list`, `GET /functions/list`) and calling one fails loudly with "not supported in osm:
 * <name>" — never a silent success. (db_update, run_status, run_status_by_uuid and
 * db_reset_event_logs were listed before but only answered an error string: removed in issue 16.)
 */
export const UNSUPPORTED_FUNCTIONS: readonly string[] = [
  'db_update', 'run_status', 'run_status_by_uuid', 'db_reset_event_logs', 'db_import_vigolium',
  'llm_invoke', 'llm_invoke_custom', 'llm_conversations', 'snapshot_export', 'snapshot_import', 'run_nmap',
  'filepath_installer', 'ssh_exec', 'ssh_rsync', 'sync_from_master', 'sync_from_worker',
  'rsync_to_worker', 'tmux_run', 'tmux_capture', 'tmux_send', 'tmux_kill', 'tmux_list', 'run_on_master', 'run_on_worker',
];

export interface CatalogEntry {
  /** snake_case name. */
  name: string;
  /** e.g. "file_exists(path)". */
  signature: string;
  description: string;
  return_type: string;
  category: string;
  /** camelCase (and other) spellings. */
  aliases: string[];
  example?: string;
}

/** Display order and titles (the reference's CategoryOrder). */
export const CATEGORY_TITLES: Record<string, string> = {
  file: 'File Functions',
  string: 'String Functions',
  type_conversion: 'Type Conversion',
  utility: 'Utility Functions',
  logging: 'Logging Functions',
  color_printing: 'Color Printing Functions',
  runtime_vars: 'Runtime Variable Functions',
  http: 'HTTP Functions',
  generation: 'Generation Functions',
  encoding: 'Encoding Functions',
  data_query: 'Data Query Functions',
  unix_commands: 'Unix Command Wrappers',
  archive: 'Archive Functions',
  diff: 'Diff Functions',
  output: 'Output Functions',
  url_processing: 'URL Processing Functions',
  markdown: 'Markdown Functions',
  database: 'Database Functions',
  installer: 'Installer Functions',
  event_generation: 'Event Generation Functions',
  notification: 'Notification Functions',
  cdn_storage: 'CDN/Storage Functions',
  environment: 'Environment Functions',
  type_detection: 'Type Detection Functions',
};

/** snake_case → camelCase (`to_lower_case` → `toLowerCase`). */
export function camelName(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

// [signature, return type, description, example?, extra aliases?]
type Row = [string, string, string, string?, string[]?];

const ROWS: Record<string, Row[]> = {
  file: [
    ['file_exists(path)', 'bool', 'Check if a file or folder exists', "file_exists('{{Output}}/subdomains.txt')"],
    ['file_length(path)', 'int', 'Count non-empty lines in a file (0 on error)', "file_length('{{Output}}/subdomains.txt')"],
    ['dir_length(path)', 'int', 'Count entries in a directory', "dir_length('{{Output}}/screenshots')"],
    ['file_contains(path, pattern)', 'bool', 'Check if a file matches a regex (substring search when the regex is invalid)', "file_contains('{{Output}}/urls.txt', 'admin')"],
    ['regex_extract(path, pattern)', '[]string', 'Lines of a file matching a regex', "regex_extract('{{Output}}/urls.txt', '.*api.*')"],
    ['read_file(path)', 'string', 'Read entire file contents ("" on error)', "read_file('{{Output}}/config.json')"],
    ['read_lines(path)', '[]string', 'Read a file as an array of lines', "read_lines('{{Output}}/subdomains.txt')"],
    ['write_file(path, content)', 'bool', 'Write content to a file (creates parent folders)', "write_file('{{Output}}/note.txt', 'hello')"],
    ['copy_file(src, dst)', 'bool', 'Copy a regular file (creates parent folders)', "copy_file('{{Output}}/a.txt', '{{Output}}/b.txt')"],
    ['merge_files(pattern, output)', 'bool', 'Concatenate the files matching a glob into output', "merge_files('{{Output}}/subs-*.txt', '{{Output}}/all.txt')"],
    ['remove_file(path)', 'bool', 'Delete a regular file', "remove_file('{{Output}}/temp.txt')"],
    ['remove_folder(path)', 'bool', 'Delete a folder recursively', "remove_folder('{{Output}}/cache')"],
    ['rm_rf(path)', 'bool', 'Delete a file or folder recursively (true when gone)', "rm_rf('{{Output}}/tmp')"],
    ['remove_all_except(folder, keep_file)', 'bool', 'Remove everything under folder except keep_file', "remove_all_except('{{Output}}', '{{Output}}/keep.txt')"],
    ['create_folder(path)', 'bool', 'Create a folder recursively', "create_folder('{{Output}}/new-folder')"],
    ['append_file(dest, source)', 'bool', 'Append the content of the source file to the destination file', "append_file('{{Output}}/all.txt', '{{Output}}/part.txt')"],
    ['move_file(source, dest)', 'bool', 'Move a file (rename, or copy+delete across devices)', "move_file('{{Output}}/raw.txt', '{{Output}}/processed.txt')"],
    ['glob(pattern)', '[]string', 'File names matching a glob pattern (no **), sorted', "glob('{{Output}}/*.txt')"],
    ['grep_string_to_file(dest, source, str)', 'bool', 'Write lines containing a string to the destination file'],
    ['grep_regex_to_file(dest, source, pattern)', 'bool', 'Write lines matching a regex to the destination file'],
    ['grep_string(source, str)', 'string', 'Lines containing a string, joined by newlines'],
    ['grep_regex(source, pattern)', 'string', 'Lines matching a regex, joined by newlines'],
    ['remove_blank_lines(path)', 'bool', 'Remove blank lines from a file in place'],
    ['chunk_file(input, lines_per_chunk, output)', 'bool', 'Split non-blank lines into <base>_part_<i><ext> files; output lists the chunk paths'],
    ['cut_to_file(input_file, delim, field, output_file)', 'bool', 'Keep the 1-indexed field of every line (like cut -d -f)'],
  ],
  string: [
    ['trim(str)', 'string', 'Trim surrounding whitespace', "trim('  hello  ')"],
    ['trim_string(input, cutset)', 'string', 'Trim any of the cutset characters from both ends'],
    ['trim_left(input, cutset)', 'string', 'Trim any of the cutset characters from the start'],
    ['trim_right(input, cutset)', 'string', 'Trim any of the cutset characters from the end'],
    ['split(str, delim)', '[]string', 'Split a string by a delimiter', "split('a,b,c', ',')"],
    ['join(arr, delim)', 'string', 'Join an array with a delimiter', "join(['a','b','c'], ',')"],
    ['replace(str, old, new)', 'string', 'Replace all occurrences', "replace('hello', 'l', 'L')"],
    ['contains(str, substr)', 'bool', 'Check if a string contains a substring', "contains('hello', 'ell')"],
    ['starts_with(str, prefix)', 'bool', 'Check if a string starts with a prefix'],
    ['ends_with(str, suffix)', 'bool', 'Check if a string ends with a suffix'],
    ['to_lower_case(str)', 'string', 'Convert to lowercase'],
    ['to_upper_case(str)', 'string', 'Convert to uppercase'],
    ['match(str, pattern)', 'bool', 'Check if a string matches a regex', "match('test123', '[0-9]+')"],
    ['regex_match(pattern, str)', 'bool', 'Check if a string matches a regex (pattern first)', "regex_match('[0-9]+', 'test123')"],
    ['cut_with_delim(input, delim, field)', 'string', 'Field by delimiter (1-indexed)', "cut_with_delim('a:b:c', ':', 2)", ['cut']],
    ['cut_space(input, field)', 'string', 'Field split on runs of whitespace (1-indexed)'],
    ['normalize_path(input)', 'string', 'Replace / | : \\ * ? " < > with underscores'],
    ['normal_path(input)', 'string', 'Path-friendly name (same rule as {{TargetSpace}})'],
    ['get_target_space(input)', 'string', 'Workspace name of a target (sanitised, shortened when long)'],
    ['clean_sub(path, target?)', 'bool', 'Clean and de-duplicate subdomains in a file, optionally keeping only target', "clean_sub('{{Output}}/subdomains.txt', 'example.com')"],
  ],
  type_conversion: [
    ['parse_int(str)', 'int', 'Parse a decimal integer (0 on failure). In scripts `parseInt` is the JS built-in', "parse_int('42')"],
    ['parse_float(str)', 'float', 'Parse a float (0 on failure). In scripts `parseFloat` is the JS built-in', "parse_float('3.14')"],
    ['to_string(val)', 'string', 'Convert a value to a string', 'to_string(123)'],
    ['to_boolean(val)', 'bool', 'JS truthiness ("false" is true)', "to_boolean('true')"],
  ],
  utility: [
    ['len(val)', 'int', 'Byte length of a string or length of an array', "len('hello')"],
    ['is_empty(val)', 'bool', 'Check if a value is empty (null, blank, "undefined", [])', "is_empty('')"],
    ['is_not_empty(val)', 'bool', 'Check if a value is not empty', "is_not_empty('test')"],
    ['printf(message)', 'void', 'Print a message', "printf('Scan started')"],
    ['cat_file(path)', 'void', 'Print file content', "cat_file('{{Output}}/results.txt')"],
    ['exit(code)', 'void', 'Not allowed: fails the script instead of ending the process', 'exit(1)'],
    ['skip(message?)', 'void', 'Skip the rest of the current module', "skip('nothing to scan')"],
    ['exec_cmd(command)', 'string', 'Run a shell command and return its trimmed stdout ("" on failure)', "exec_cmd('whoami')", ['bash']],
    ['sleep(seconds)', 'void', 'Pause for n seconds', 'sleep(5)'],
    ['command_exists(command)', 'bool', 'Check if a command exists in PATH', "command_exists('nmap')"],
    ['pick_valid(v1, ..., v10)', 'any', 'First non-empty value among the arguments'],
    ['run_module(module, target, params?)', 'string', 'Run a module with osm and return its output'],
    ['run_flow(flow, target, params?)', 'string', 'Run a flow with osm and return its output'],
    ['exec_python(code)', 'string', 'Run Python code (uv or python3) and return stdout'],
    ['exec_python_file(path)', 'string', 'Run a Python file and return stdout'],
    ['exec_ts(code)', 'string', 'Run TypeScript code with bun and return stdout'],
    ['exec_ts_file(path)', 'string', 'Run a TypeScript file with bun and return stdout'],
    ['sudo_auth(password?, keepalive?)', 'bool', 'Validate sudo credentials'],
    ['run_agent(message, agent_name?)', 'string', 'Run an ACP agent (settings acp.agents, or claude-code, codex, gemini, opencode) with a message and return its answer ("" on error)'],
  ],
  logging: [
    ['log_debug(message)', 'void', 'Log a message with [DEBUG] prefix', "log_debug('Processing target')"],
    ['log_info(message)', 'void', 'Log a message with [INFO] prefix', "log_info('Scan completed')"],
    ['log_warn(message)', 'void', 'Log a message with [WARN] prefix', "log_warn('Timeout hit')"],
    ['log_error(message)', 'void', 'Log a message with [ERROR] prefix', "log_error('Request failed')"],
  ],
  color_printing: [
    ['print_green(message)', 'string', 'Print a message in green'],
    ['print_blue(message)', 'string', 'Print a message in blue'],
    ['print_yellow(message)', 'string', 'Print a message in yellow'],
    ['print_red(message)', 'string', 'Print a message in red'],
  ],
  runtime_vars: [
    ['set_var(name, value)', 'string', 'Set a variable for the rest of this evaluation', "set_var('api_url', 'https://api.example.com')"],
    ['get_var(name)', 'string', 'Get a variable set with set_var ("" when unset)', "get_var('api_url')"],
  ],
  http: [
    ['http_request(url, method?, headers?, body?)', 'object', 'HTTP request → {statusCode, body, headers, error}', "http_request('https://api.example.com', 'GET', {}, '')"],
    ['http_get(url)', 'object', 'HTTP GET with a structured response', "http_get('https://api.example.com/data')"],
    ['http_post(url, body)', 'object', 'HTTP POST (JSON body) with a structured response'],
    ['get_ip(domain_or_url)', 'string', 'Resolve a domain or URL host to an IP address', "get_ip('https://example.com/path')"],
  ],
  generation: [
    ['random_string(length)', 'string', 'Random alphanumeric string', 'random_string(16)'],
    ['uuid()', 'string', 'UUID v4', 'uuid()'],
    ['timestamp()', 'int', 'Current Unix time in seconds', 'timestamp()'],
  ],
  encoding: [
    ['base64_encode(str)', 'string', 'Encode a string to base64', "base64_encode('hello')"],
    ['base64_decode(str)', 'string', 'Decode a base64 string ("" when invalid)', "base64_decode('aGVsbG8=')"],
    ['url_encode(str)', 'string', 'Percent-encode a string', "url_encode('a b&c')"],
    ['url_decode(str)', 'string', 'Decode a percent-encoded string', "url_decode('a%20b')"],
  ],
  data_query: [
    ['jq(json, query)', 'any', 'Query JSON with a jq subset (paths, [], keys, length, |)', 'jq(\'{"name":"test"}\', \'.name\')'],
    ['jq_from_file(path, query)', 'any', 'Query a JSON file with a jq subset', "jq_from_file('{{Output}}/data.json', '.name')"],
  ],
  unix_commands: [
    ['sort_unix(input, output?)', 'bool', 'Sort and de-duplicate a file (LC_ALL=C sort -u)', "sort_unix('{{Output}}/urls.txt')"],
    ['wget_unix(url, output?)', 'bool', 'Download a file with wget'],
    ['wget(url, output)', 'bool', 'Download a file natively (parallel ranges for big files)'],
    ['git_clone(repo, dest?)', 'bool', 'Shallow-clone a git repository'],
    ['git_clone_subfolder(git_url, subfolder, dest)', 'bool', 'Clone a repository and copy only one subfolder'],
    ['git_pull(repo_path)', 'bool', 'Fast-forward pull in a working copy'],
    ['zip_unix(source, dest)', 'bool', 'Create a zip archive (zip -r)'],
    ['unzip_unix(source, dest?)', 'bool', 'Extract a zip archive (unzip)'],
    ['tar_unix(source, dest)', 'bool', 'Create a tar.gz archive (tar -czf)'],
    ['untar_unix(source, dest?)', 'bool', 'Extract a tar.gz archive (tar -xzf)'],
    ['diff_unix(file1, file2, output?)', 'object', 'Compare files with diff → {error, message, output, file1, file2, line_count}'],
    ['sed_string_replace(sed_syntax, source, dest)', 'bool', 'Literal replacement with s/old/new/g syntax'],
    ['sed_regex_replace(sed_syntax, source, dest)', 'bool', 'Regex replacement with s/pattern/repl/g syntax'],
  ],
  archive: [
    ['zip_dir(source, dest)', 'bool', 'Zip a directory or a file (links never followed out of the source)'],
    ['unzip_dir(source, dest)', 'bool', 'Unzip an archive, skipping entries that would escape dest'],
    ['extract_to(source, dest)', 'bool', 'Recreate dest and extract a zip / tar.gz / tar.bz2 / tar.xz into it'],
  ],
  diff: [['extract_diff(file1, file2)', 'string', 'Lines only in file2 (new content)']],
  output: [
    ['save_content(content, path)', 'bool', 'Save string content to a file'],
    ['jsonl_to_csv(source, dest)', 'bool', 'Convert a JSONL file to CSV'],
    ['csv_to_jsonl(source, dest)', 'bool', 'Convert a CSV file to JSONL'],
    ['jsonl_unique(source, dest, fields)', 'bool', 'De-duplicate JSONL lines by the values of some (dot-path) fields'],
    ['jsonl_filter(source, dest, fields)', 'bool', 'Keep only some (dot-path) fields of every JSONL line'],
    ['nmap_to_jsonl(input_path, output_path)', 'bool', 'Convert nmap XML (or .gnmap) output to JSONL, one host per line with open_ports and ports', "nmap_to_jsonl('{{Output}}/nmap.xml', '{{Output}}/ports.jsonl')"],
    ['jsonl_rename_key(source, dest, mapping)', 'bool', "Rename top-level keys ('old:new,old2:new2')"],
  ],
  url_processing: [
    ['interesting_urls(src, dest, json_field?)', 'bool', 'De-duplicate URLs by host+path+param names, drop static files and noise'],
    ['get_parent_url(url)', 'string', 'URL without its last path segment, query and fragment'],
    ['parse_url(url, format)', 'string', 'Format URL parts with unfurl directives (%s %d %S %r %t %P %p %e %q %f %u %a %@ %: %? %# %%)'],
    ['parse_url_file(input, format, output)', 'bool', 'parse_url on every line of a file (unique results)'],
    ['query_replace(url, value, mode?)', 'string', 'Replace (or append to, mode "append") every query value'],
    ['path_replace(url, value, position?)', 'string', 'Replace a path segment (1-indexed; 0 replaces all)'],
  ],
  markdown: [
    ['render_markdown_from_file(path)', 'string', 'Markdown of a file (no terminal styling available: raw text)'],
    ['print_markdown_from_file(path)', 'void', 'Print the markdown of a file'],
    ['convert_jsonl_to_markdown(input_path, output_path)', 'bool', 'Write a JSONL file as a markdown table'],
    ['convert_csv_to_markdown(path)', 'string', 'A CSV file as a markdown table'],
    ['render_markdown_report(template_path, output_path)', 'bool', 'Render a markdown template with variables and osm-func blocks'],
    ['generate_security_report(template_path)', 'bool', 'Render a report template to {{Output}}/security-report.md'],
    ['convert_sarif_to_markdown(input_path, output_path)', 'bool', 'Write SARIF results as a markdown table'],
  ],
  event_generation: [
    ['generate_event(workspace, topic, source, data_type, data)', 'bool', 'Record an event: a running daemon fires matching event triggers (otherwise it is replayed when one starts); also sent to webhooks', "generate_event('{{Workspace}}', 'assets.new', 'httpx', 'url', 'https://a.example.com')"],
    ['generate_event_from_file(workspace, topic, source, data_type, path)', 'int', 'One event per non-blank line of a file (data = the line); returns how many were recorded', "generate_event_from_file('{{Workspace}}', 'assets.new', 'httpx', 'url', '{{Output}}/urls.txt')"],
  ],
  notification: [
    ['notify_webhook(message)', 'bool', 'Send {event: "message", data: {message}} to the enabled webhooks (notification.webhooks); true when one accepted it', "notify_webhook('scan of {{Target}} done')"],
    ['send_webhook_event(type, data)', 'bool', 'Send {event: type, data} to the enabled webhooks whose events filter allows it', "send_webhook_event('custom', {count: 3})"],
    ['notify_telegram(message)', 'bool', 'Send a Telegram message to notification.telegram.chat_id', "notify_telegram('scan of {{Target}} done')"],
    ['notify_telegram_channel(channel, message)', 'bool', 'Send a Telegram message to a channel of notification.telegram.telegram_channel_map', "notify_telegram_channel('alerts', 'new findings')"],
    ['send_telegram_file(path, caption?)', 'bool', 'Send a file as a Telegram document to notification.telegram.chat_id', "send_telegram_file('{{Output}}/report.md', 'report')"],
    ['send_telegram_file_channel(channel, path, caption?)', 'bool', 'Send a file as a Telegram document to a mapped channel', "send_telegram_file_channel('alerts', '{{Output}}/vulns.txt')"],
    ['notify_message_as_file_telegram(path)', 'bool', 'Send the content of a file as a text file (document) to notification.telegram.chat_id', "notify_message_as_file_telegram('{{Output}}/summary.md')"],
    ['notify_message_as_file_telegram_channel(channel, path)', 'bool', 'Send the content of a file as a text file (document) to a mapped channel', "notify_message_as_file_telegram_channel('alerts', '{{Output}}/summary.md')"],
  ],
  // Object storage of the `storage` settings (src/engine/functions/cdn.ts).
  cdn_storage: [
    ['cdn_upload(localPath, remoteKey)', 'bool', 'Upload a file to the storage bucket (multipart for big files)', "cdn_upload('{{Output}}/report.zip', 'scans/{{Target}}/report.zip')"],
    ['cdn_download(remoteKey, localPath)', 'bool', 'Download an object to a file (creates parent folders)', "cdn_download('wordlists/common.txt', '{{Output}}/common.txt')"],
    ['cdn_exists(remoteKey)', 'bool', 'Check if an object exists', "cdn_exists('scans/{{Target}}/report.zip')"],
    ['cdn_delete(remoteKey)', 'bool', 'Delete an object; a key ending in / (or naming no object) deletes that folder', "cdn_delete('scans/{{Target}}/old-report.zip')"],
    ['cdn_sync_upload(localDir, remotePrefix)', 'object', 'Upload the files of a folder that the bucket lacks or holds changed: {success, uploaded, skipped, errors}', "cdn_sync_upload('{{Output}}', 'scans/{{Target}}/')"],
    ['cdn_sync_download(remotePrefix, localDir)', 'object', 'Download the objects under a prefix that the folder lacks or holds changed (unsafe keys refused): {success, downloaded, skipped, errors}', "cdn_sync_download('base-setup/', '{{Output}}/setup')"],
    ['cdn_get_presigned_url(remoteKey, expiryMins?)', 'string', 'A presigned GET URL (default lifetime storage.presign_expiry)', "cdn_get_presigned_url('scans/{{Target}}/report.zip', 60)"],
    ['cdn_list(prefix?)', '[]object', 'Objects under a prefix: [{key, size, lastModified, etag}]', "cdn_list('scans/')"],
    ['cdn_stat(remoteKey)', 'object', 'Metadata of an object {key, size, lastModified, etag}, or null', "cdn_stat('scans/{{Target}}/report.zip')"],
    ['cdn_read(remoteKey)', 'string', 'Content of an object as text (up to 16 MiB)', "cdn_read('config/settings.yaml')"],
    ['cdn_ls_tree(prefix?, depth?)', 'string', 'Objects under a prefix drawn as a tree (depth limits the levels)', "cdn_ls_tree('scans/', 2)"],
  ],
  database: [
    ['register_artifact(path, type?)', 'bool', 'Register a file as a run artifact'],
    ['store_artifact(path)', 'bool', 'Store a file as an artifact of the current workspace'],
    ['db_import_asset(workspace, json)', 'bool', 'Import an asset from JSON (upsert)'],
    ['db_quick_import_asset(workspace, asset_value, asset_type?)', 'bool', 'Upsert an asset by value'],
    ['db_raw_insert_asset(workspace, json)', 'int', 'Insert an asset from JSON (returns its id)'],
    ['db_partial_import_asset(workspace, asset_type, asset_value)', 'bool', 'Upsert an asset by value and type'],
    ['db_partial_import_asset_file(workspace, asset_type, file_path)', 'int', 'Upsert every line of a file as an asset'],
    ['db_total_urls(path)', 'int', 'Add the line count to the workspace URL counter'],
    ['db_total_subdomains(path)', 'int', 'Add the line count to the workspace subdomain counter'],
    ['db_total_assets(path)', 'int', 'Add the line count to the workspace asset counter'],
    ['db_total_vulns(path)', 'int', 'Add the line count to the workspace vulnerability counter'],
    ['db_total_ips(path)', 'int', 'Add the line count to the workspace IP counter'],
    ['db_total_links(path)', 'int', 'Add the line count to the workspace link counter'],
    ['db_total_content(path)', 'int', 'Add the line count to the workspace content counter'],
    ['db_total_archive(path)', 'int', 'Add the line count to the workspace archive counter'],
    ['db_vuln_critical(path)', 'int', 'Add the line count to the critical vulnerability counter'],
    ['db_vuln_high(path)', 'int', 'Add the line count to the high vulnerability counter'],
    ['db_vuln_medium(path)', 'int', 'Add the line count to the medium vulnerability counter'],
    ['db_vuln_low(path)', 'int', 'Add the line count to the low vulnerability counter'],
    ['runtime_export()', 'bool', 'Write run-state.json to the state file'],
    ['db_select_assets(workspace, format)', 'string', 'Assets as markdown or jsonl'],
    ['db_select_assets_filtered(workspace, status_code, asset_type, format)', 'string', 'Filtered assets as markdown or jsonl'],
    ['db_select_vulnerabilities(workspace, format)', 'string', 'Vulnerabilities as markdown or jsonl'],
    ['db_select_vulnerabilities_filtered(workspace, severity, asset_value, format)', 'string', 'Filtered vulnerabilities as markdown or jsonl'],
    ['db_select(sql, format)', 'string', 'Read-only SELECT query as markdown or jsonl'],
    ['db_select_to_file(sql, dest)', 'bool', 'Read-only SELECT query written as markdown'],
    ['db_select_to_jsonl(sql, fields, dest)', 'bool', 'Read-only SELECT query written as JSONL'],
    ['db_select_total_subdomains()', 'int', 'Workspace subdomain counter'],
    ['db_select_total_urls()', 'int', 'Workspace URL counter'],
    ['db_select_total_assets()', 'int', 'Workspace asset counter'],
    ['db_select_total_vulns()', 'int', 'Workspace vulnerability counter'],
    ['db_select_vuln_critical()', 'int', 'Workspace critical vulnerability counter'],
    ['db_select_vuln_high()', 'int', 'Workspace high vulnerability counter'],
    ['db_select_vuln_medium()', 'int', 'Workspace medium vulnerability counter'],
    ['db_select_vuln_low()', 'int', 'Workspace low vulnerability counter'],
    ['db_import_asset_from_file(workspace, file_path, source?)', 'object', 'Import httpx JSONL assets'],
    ['db_import_vuln(workspace, json)', 'bool', 'Import one nuclei finding'],
    ['db_import_vuln_from_file(workspace, file_path)', 'object', 'Import nuclei JSONL findings'],
    ['db_import_dns_asset(workspace, file_path)', 'int', 'Import zone-style DNS records as assets'],
    ['db_import_custom_asset(workspace, file_path, asset_type?, source?)', 'object', 'Import generic JSONL assets'],
    ['db_import_sarif(workspace, file_path)', 'object', 'Import SARIF results as vulnerabilities'],
    ['db_import_port_assets(workspace, file_path, source?)', 'object', 'Import nmap_to_jsonl port JSONL as host and port assets (source portscan)'],
    ['db_import_tool(tool, workspace, file_path, source?)', 'object', 'Import any supported tool output (osm import --help lists the tools)', "db_import_tool('nmap', '{{Workspace}}', '{{Output}}/nmap.xml')"],
    ['db_import_nmap(workspace, file_path, source?)', 'object', 'Import nmap XML (-oX): hosts, open ports and services', "db_import_nmap('{{Workspace}}', '{{Output}}/nmap.xml')"],
    ['db_import_masscan(workspace, file_path, source?)', 'object', 'Import masscan JSON (-oJ): hosts and open ports'],
    ['db_import_naabu(workspace, file_path, source?)', 'object', 'Import naabu JSON lines: hosts and open ports'],
    ['db_import_subfinder(workspace, file_path, source?)', 'object', 'Import subfinder JSON lines (-oJ) as domain assets'],
    ['db_import_dnsx(workspace, file_path, source?)', 'object', 'Import dnsx JSON lines: domains with their DNS records'],
    ['db_import_whatweb(workspace, file_path, source?)', 'object', 'Import WhatWeb JSON (--log-json): URLs with title, server and technologies'],
    ['db_import_ffuf(workspace, file_path, source?)', 'object', 'Import ffuf JSON (-of json): discovered URLs', "db_import_ffuf('{{Workspace}}', '{{Output}}/ffuf.json')"],
    ['db_import_gobuster(workspace, file_path, base_url?, source?)', 'object', 'Import gobuster dir output (base_url when written without -e)'],
    ['db_import_katana(workspace, file_path, source?)', 'object', 'Import katana JSON lines: crawled URLs'],
    ['db_import_testssl(workspace, file_path, source?)', 'object', 'Import testssl.sh JSON (--jsonfile): TLS weaknesses as findings'],
    ['db_import_sslscan(workspace, file_path, source?)', 'object', 'Import sslscan XML (--xml): TLS service and weaknesses as findings'],
    ['generate_workspace_report(workspace, format, output_path)', 'bool', 'Write the workspace report (html, md or json) as osm report does', "generate_workspace_report('{{Workspace}}', 'html', '{{Output}}/report.html')"],
    ['db_asset_diff(workspace)', 'string', 'Asset diff as JSONL'],
    ['db_vuln_diff(workspace)', 'string', 'Vulnerability diff as JSONL'],
    ['db_asset_diff_to_file(workspace, dest)', 'bool', 'Write the asset diff to a JSONL file'],
    ['db_vuln_diff_to_file(workspace, dest)', 'bool', 'Write the vulnerability diff to a JSONL file'],
    ['db_insert_asset(workspace, data)', 'bool', 'Insert an asset (spec name)'],
    ['db_query_assets(workspace, filter)', 'string', 'Query assets (spec name)'],
    ['db_update_workspace_stats(workspace)', 'bool', 'Recompute workspace statistics (spec name)'],
  ],
  installer: [
    ['go_getter(url, dest)', 'bool', 'Download an http(s) URL into a folder (archives extracted unless ?archive=false); git::<url> clones', "go_getter('https://example.com/wordlists.tar.gz', '{{Data}}/wordlists')"],
    ['go_getter_with_sshkey(key, git_url, dest)', 'bool', 'Clone a git repository over SSH into dest with the private key file key (no other identity, never prompts)', "go_getter_with_sshkey('{{Data}}/deploy_key', 'git@github.com:org/private-wordlists.git', '{{Data}}/private-wordlists')"],
    ['nix_install(package, dest?)', 'bool', 'Install a nixpkgs package with nix profile install (into the profile dest when given); errors when nix is missing', "nix_install('nmap')"],
  ],
  environment: [
    ['os_getenv(name)', 'string', 'Get an environment variable', "os_getenv('HOME')"],
    ['os_setenv(name, value)', 'bool', 'Set an environment variable of the osm process', "os_setenv('API_KEY', 'secret')"],
  ],
  type_detection: [
    ['get_types(input)', 'string', 'Detect the input type (file, folder, cidr, ip, url, domain, string)', "get_types('192.168.1.0/24')"],
    ['is_file(path)', 'bool', 'Check if a path is a regular file'],
    ['is_dir(path)', 'bool', 'Check if a path is a directory'],
    ['is_git(input)', 'bool', 'Check if a folder is a git working copy or a URL names a git repository'],
    ['is_url(input)', 'bool', 'Check if the input is an http(s)/ftp/ws URL'],
    ['is_compress(path)', 'bool', 'Check if a file is a compressed archive (extension or magic bytes)'],
    ['detect_language(path)', 'string', 'Dominant programming language of a source folder (golang, python, javascript, …; unknown when none)', "detect_language('{{Output}}/repo')"],
  ],
};

/** Every catalogued function, in category order. */
export const FUNCTION_CATALOG: CatalogEntry[] = Object.entries(ROWS).flatMap(([category, rows]) =>
  rows.map(([signature, return_type, description, example, extra]) => {
    const name = signature.slice(0, signature.indexOf('('));
    const camel = camelName(name);
    const aliases = [...(camel !== name ? [camel] : []), ...(extra ?? [])];
    const entry: CatalogEntry = { name, signature, description, return_type, category, aliases };
    if (example) entry.example = example;
    return entry;
  }),
);

/** The spec's `GET /functions/list` shape: category → [{ name: signature, description, return_type }]. */
export function catalogByCategory(): Record<string, { name: string; description: string; return_type: string }[]> {
  const out: Record<string, { name: string; description: string; return_type: string }[]> = {};
  for (const e of FUNCTION_CATALOG) {
    const list = (out[e.category] ??= []);
    list.push({ name: e.signature, description: e.description, return_type: e.return_type });
    // The spec's catalogue names these functions in camelCase: list that spelling too, so a client
    // looking up `fileExists(path)` finds it.
    for (const alias of e.aliases) {
      if (SPEC_SPELLINGS.has(alias)) list.push({ name: alias + e.signature.slice(e.name.length), description: `${e.description} (same as ${e.name})`, return_type: e.return_type });
    }
  }
  return out;
}

/** Function names as the spec's "Utility function catalog" spells them where that is not snake_case. */
const SPEC_SPELLINGS = new Set([
  'fileExists', 'fileLength', 'readFile', 'writeFile', 'appendFile', 'removeFile', 'copyFile', 'mergeFiles',
  'toLowerCase', 'toUpperCase', 'isEmpty', 'commandExists', 'httpRequest', 'randomString',
  'base64Encode', 'base64Decode', 'urlEncode', 'urlDecode', 'sortUnix', 'gitClone', 'gitPull', 'parseInt', 'toString',
]);
