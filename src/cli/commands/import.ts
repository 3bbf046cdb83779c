import type { Command } from 'commander';

/** The importers `osm import` knows (src/ingest/tools.ts; a test keeps this list in step with it). */
export const IMPORT_TOOLS_HELP = `
Tools and the output they read:
  nmap       XML (nmap -oX scan.xml)
  masscan    JSON (masscan -oJ scan.json)
  naabu      JSON lines (naabu -json -o ports.jsonl)
  ports      JSON lines of the nmap_to_jsonl function
  subfinder  JSON lines (subfinder -oJ -o subs.jsonl)
  dnsx       JSON lines (dnsx -json -o dns.jsonl)
  dns        text lines "name TYPE value" (zone style, dnsx -re)
  httpx      JSON lines (httpx -json -o http.jsonl)
  whatweb    JSON (whatweb --log-json=out.json)
  ffuf       JSON (ffuf -of json -o out.json)
  gobuster   text (gobuster dir -o out.txt; -e for full URLs, else --base-url)
  katana     JSON lines (katana -jsonl -o crawl.jsonl)
  nuclei     JSON lines (nuclei -jsonl -o findings.jsonl)
  testssl    JSON (testssl.sh --jsonfile out.json)
  sslscan    XML (sslscan --xml=out.xml host:port)
  sarif      SARIF 2.1.0 JSON

Importing the same file again adds no row: assets merge on (workspace, asset_value, url),
findings on their fingerprint. Exit code 1 when no record of the file could be imported.`;

/** `osm import <tool> <file> -w <workspace>`: a scanner's output file into the database. */
export function registerImport(program: Command): void {
  program
    .command('import')
    .description("import a tool's output file (nmap, ffuf, sslscan, …) as assets and findings")
    .argument('<tool>', 'the tool that wrote the file (see the list below)')
    .argument('<file>', 'the output file')
    .requiredOption('-w, --workspace <name>', 'the workspace to import into')
    .option('--source <name>', 'discovery source stored on assets (default: the tool name)')
    .option('--base-url <url>', 'base URL for gobuster output written without -e')
    .option('--scope-file <file>', 'drop rows out of this scope (on top of the workspace scope of the settings; docs/scope.md)')
    .addHelpText('after', IMPORT_TOOLS_HELP)
    .action(async (tool: string, file: string, _opts, command: Command) => {
      const { importAction } = await import('../actions/import.js');
      await importAction(tool, file, command);
    });
}
